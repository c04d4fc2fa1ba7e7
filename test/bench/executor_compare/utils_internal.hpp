// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// MSCCL++ a02ba3b1's test/executor_test.cc includes its library's internal utils_internal.hpp for one
// thing, mscclpp::Timer. This library has no such internal header; executor_compare.sh puts this
// folder on the include path when it builds that program against this library, so that the same
// source compiles against both. Only what the program uses: reset() and elapsed() in microseconds.

#ifndef MSCCLPP_TEST_BENCH_EXECUTOR_COMPARE_UTILS_INTERNAL_HPP_
#define MSCCLPP_TEST_BENCH_EXECUTOR_COMPARE_UTILS_INTERNAL_HPP_

#include <chrono>
#include <cstdint>

namespace mscclpp {

struct Timer {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  void reset() { start = std::chrono::steady_clock::now(); }

  /// Microseconds since construction or the last reset().
  int64_t elapsed() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  }
};

}  // namespace mscclpp

#endif  // MSCCLPP_TEST_BENCH_EXECUTOR_COMPARE_UTILS_INTERNAL_HPP_
