// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Where in a plan something is wrong. Every message about a plan (reading, parsing, resolving for
// sizes, setting up, executing) starts with the prefix built here, so that each names the file, the
// rank and the place the same way.

#ifndef MSCCLPP_EXT_EXECUTOR_PLAN_ERROR_HPP_
#define MSCCLPP_EXT_EXECUTOR_PLAN_ERROR_HPP_

#include <mscclpp/errors.hpp>
#include <string>

#include "common/strings.hpp"

namespace mscclpp::executor {

/// A place in the plan file `path` read for `rank`; `place` narrows it down ("gpu 0, threadblock 2,
/// op 1 (put)"), empty for the plan as a whole.
struct Where {
  const std::string& path;
  int rank;
  std::string place;

  /// "execution plan '<path>', rank <rank>[, <place>]: "
  std::string prefix() const {
    return concat("execution plan '", path, "', rank ", rank, place.empty() ? "" : ", ", place, ": ");
  }

  /// The same plan and rank, one step further in.
  Where at(const std::string& more) const { return Where{path, rank, place.empty() ? more : place + ", " + more}; }

  /// Error(ExecutorError) with the prefix.
  [[noreturn]] void fail(const std::string& what) const { throw Error(prefix() + what, ErrorCode::ExecutorError); }
};

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_PLAN_ERROR_HPP_
