// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/unique_fd.hpp"

#include <unistd.h>

#include "common/checks.hpp"

namespace mscclpp {

void UniqueFd::reset(int fd) noexcept {
  int old = std::exchange(fd_, fd);
  // EINTR from close still releases the descriptor on Linux, so it is not retried.
  if (old >= 0 && ::close(old) != 0 && errno != EINTR) {
    LOG_WARN(NET, "close(", old, ") failed: ", errnoName(errno));
  }
}

}  // namespace mscclpp
