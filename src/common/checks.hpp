// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The library's error policy, in two classes (docs/design.md, "Errors"):
// - Recoverable failures of the outside world (an OS call, a peer, a bad argument, bytes from the
//   network) throw a typed exception that names the operation and the decoded error.
// - A broken invariant of the library itself throws Error(InternalError) through MSCCLPP_ASSERT; the
//   library never calls abort() or exit().
// Cleanup paths (destructors, deleters) use the *_IGNORE forms: they log a WARN and continue, so a
// destructor never throws.

#ifndef MSCCLPP_COMMON_CHECKS_HPP_
#define MSCCLPP_COMMON_CHECKS_HPP_

#include <cerrno>
#include <mscclpp/errors.hpp>

#include "common/logger.hpp"
#include "common/strings.hpp"

/// Throws Error(ErrorCode::code) with the streamed message.
#define MSCCLPP_THROW(code, ...) throw ::mscclpp::Error(::mscclpp::concat(__VA_ARGS__), ::mscclpp::ErrorCode::code)

/// Throws Error(InvalidUsage) with the message unless `cond` holds: for checks of caller input.
#define MSCCLPP_CHECK_USAGE(cond, ...)          \
  do {                                          \
    if (!(cond)) {                              \
      MSCCLPP_THROW(InvalidUsage, __VA_ARGS__); \
    }                                           \
  } while (0)

/// Throws Error(InternalError) naming the condition and the place unless `cond` holds: for invariants
/// of the library, which no caller input can break.
#define MSCCLPP_ASSERT(cond, ...)                                                                          \
  do {                                                                                                     \
    if (!(cond)) {                                                                                         \
      MSCCLPP_THROW(InternalError, "internal check '" #cond "' failed at ", __FILE__, ":", __LINE__, ": ", \
                    ::mscclpp::concat(__VA_ARGS__));                                                       \
    }                                                                                                      \
  } while (0)

/// For OS calls that return -1 and set errno: throws SysError naming the call text and the place.
#define MSCCLPP_SYSCHECK(call)                                                                                      \
  do {                                                                                                              \
    if ((call) == -1) {                                                                                             \
      int savedErrno_ = errno;                                                                                      \
      throw ::mscclpp::SysError(::mscclpp::concat("'" #call "' failed at ", __FILE__, ":", __LINE__), savedErrno_); \
    }                                                                                                               \
  } while (0)

/// Cleanup form of MSCCLPP_SYSCHECK: logs a WARN under `subsys` with the decoded errno and continues.
#define MSCCLPP_SYSCHECK_IGNORE(subsys, call)                                                     \
  do {                                                                                            \
    if ((call) == -1) {                                                                           \
      int savedErrno_ = errno;                                                                    \
      LOG_WARN(subsys, "'" #call "' failed during cleanup: ", ::mscclpp::errnoName(savedErrno_)); \
    }                                                                                             \
  } while (0)

namespace mscclpp {
/// "ECONNREFUSED (Connection refused)": the errno's symbolic name and text.
std::string errnoName(int err);
}  // namespace mscclpp

#endif  // MSCCLPP_COMMON_CHECKS_HPP_
