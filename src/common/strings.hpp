// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_COMMON_STRINGS_HPP_
#define MSCCLPP_COMMON_STRINGS_HPP_

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace mscclpp {

/// Streams every argument into one string: the message builder behind the log and check macros.
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

/// Splits on `sep`, trimming blanks around each item and dropping empty items.
std::vector<std::string> splitList(std::string_view text, char sep = ',');

/// ASCII upper-case copy (environment values are matched case-insensitively).
std::string toUpper(std::string_view text);

/// "1.5 KiB"-style rendering of a byte count, for logs and reports.
std::string formatBytes(unsigned long long bytes);

}  // namespace mscclpp

#endif  // MSCCLPP_COMMON_STRINGS_HPP_
