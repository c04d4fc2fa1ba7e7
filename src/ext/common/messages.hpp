// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The one shape of the extensions' error messages: "<source>: <what>", where the source is the object
// or the API call the message comes from ("Collectives", "Executor", "ncclAllReduce"), so that a user
// reading a message knows which call to look at.

#ifndef MSCCLPP_EXT_COMMON_MESSAGES_HPP_
#define MSCCLPP_EXT_COMMON_MESSAGES_HPP_

#include <string>
#include <string_view>
#include <utility>

#include "common/strings.hpp"

namespace mscclpp {
namespace ext {

/// "<source>: " followed by every argument of `what`, streamed.
template <typename... Args>
std::string messageFrom(std::string_view source, Args&&... what) {
  return concat(source, ": ", std::forward<Args>(what)...);
}

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_MESSAGES_HPP_
