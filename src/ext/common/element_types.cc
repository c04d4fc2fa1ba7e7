// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The public face of the element-type table (collectives.hpp): size and name of collectives::DataType.

#include "ext/common/element_types.hpp"

#include "common/checks.hpp"

namespace mscclpp {
namespace collectives {

size_t dataTypeSize(DataType type) {
  const size_t size = ext::elementSize(type);
  MSCCLPP_CHECK_USAGE(size != 0, "unknown data type ", static_cast<int>(type));
  return size;
}

const char* dataTypeName(DataType type) { return ext::elementName(type); }

}  // namespace collectives
}  // namespace mscclpp
