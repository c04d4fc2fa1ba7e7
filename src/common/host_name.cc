// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <mscclpp/utils.hpp>
#include <vector>

#include "common/checks.hpp"

namespace mscclpp {

std::string getHostName(int maxlen, const char delim) {
  MSCCLPP_CHECK_USAGE(maxlen >= 1, "getHostName: maxlen must be at least 1, got ", maxlen);
  // The whole name is read and then cut: glibc's gethostname fails with ENAMETOOLONG instead of
  // truncating when the buffer is short.
  std::vector<char> buffer(HOST_NAME_MAX + 1, '\0');
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) {
    MSCCLPP_THROW(SystemError, "gethostname failed: ", errnoName(errno));
  }
  std::string name(buffer.data());
  name = name.substr(0, name.find(delim));
  if (name.size() > static_cast<size_t>(maxlen - 1)) name.resize(static_cast<size_t>(maxlen - 1));
  return name;
}

}  // namespace mscclpp
