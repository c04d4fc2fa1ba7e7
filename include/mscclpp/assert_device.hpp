// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device-side assertions and the trap that ends a kernel on a broken invariant.
//
// MSCCLPP_ASSERT_DEVICE(cond, msg) checks `cond` only in builds that define DEBUG_BUILD (CMake Debug)
// or MSCCLPP_DEVICE_ASSERTS; elsewhere it compiles to nothing and `cond` is not evaluated, because it
// sits on hot paths (every FIFO push checks its argument ranges with it). A failed assertion prints
// one line from the failing thread (file, line, condition, message, block and thread indices) and
// traps: the kernel stops and the host's next synchronization returns a launch failure. A trapped
// context is unusable until the process exits.
//
// Spin limits do not depend on this switch: see poll_device.hpp.

#ifndef MSCCLPP_ASSERT_DEVICE_HPP_
#define MSCCLPP_ASSERT_DEVICE_HPP_

#include <cstdint>

#include "device.hpp"

#if defined(MSCCLPP_DEVICE_COMPILE)

#include <cstdio>

/// Ends the kernel with a launch failure.
#if defined(MSCCLPP_DEVICE_HIP)
#define MSCCLPP_DEVICE_TRAP() __builtin_trap()
#else
#define MSCCLPP_DEVICE_TRAP() __trap()
#endif

namespace mscclpp {
namespace detail {

// Out of line so that the printf and its arguments stay off the caller's fast path. The indices are cast
// because HIP's blockIdx.x and threadIdx.x are objects that convert to unsigned, which printf cannot take.
__device__ __noinline__ inline void deviceAssertFailed(const char* file, int line, const char* condition,
                                                       const char* message) {
  printf("mscclpp: device assertion failed at %s:%d: `%s`: %s [block (%u,%u,%u) thread (%u,%u,%u)]\n", file, line,
         condition, message, unsigned(blockIdx.x), unsigned(blockIdx.y), unsigned(blockIdx.z), unsigned(threadIdx.x),
         unsigned(threadIdx.y), unsigned(threadIdx.z));
  MSCCLPP_DEVICE_TRAP();
}

}  // namespace detail
}  // namespace mscclpp

#if defined(DEBUG_BUILD) || defined(MSCCLPP_DEVICE_ASSERTS)
#define MSCCLPP_ASSERT_DEVICE(cond, msg)                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ::mscclpp::detail::deviceAssertFailed(__FILE__, __LINE__, #cond, (msg)); \
    }                                                                          \
  } while (0)
#else
#define MSCCLPP_ASSERT_DEVICE(cond, msg) \
  do {                                   \
  } while (0)
#endif

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_ASSERT_DEVICE_HPP_
