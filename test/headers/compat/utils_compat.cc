// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/utils.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<decltype(&mscclpp::getHostName), std::string (*)(int, const char)>);
static_assert(std::is_same_v<decltype(&mscclpp::getIBDeviceCount), int (*)()>);
static_assert(std::is_same_v<decltype(&mscclpp::getIBDeviceName), std::string (*)(mscclpp::Transport)>);
static_assert(
    std::is_same_v<decltype(&mscclpp::getIBTransportByDeviceName), mscclpp::Transport (*)(const std::string&)>);

size_t useUtils() {
  size_t seed = 0;
  mscclpp::detail::hashCombine(seed, 42);
  mscclpp::detail::hashCombine(seed, std::string("x"));
  // Through core.hpp.
  mscclpp::TransportFlags flags = mscclpp::Transport::IB0;
  return seed + flags.count() + mscclpp::getHostName(1024, '.').size();
}

}  // namespace compat
