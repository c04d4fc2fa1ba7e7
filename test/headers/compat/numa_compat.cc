// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/numa.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<decltype(&mscclpp::getDeviceNumaNode), int (*)(int)>);
static_assert(std::is_same_v<decltype(&mscclpp::numaBind), void (*)(int)>);

}  // namespace compat
