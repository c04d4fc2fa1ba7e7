// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/checks.hpp"

#include <cstring>

namespace mscclpp {

std::string errnoName(int err) {
  const char* name = strerrorname_np(err);
  return concat(name ? name : "errno " + std::to_string(err), " (", std::strerror(err), ")");
}

}  // namespace mscclpp
