// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Bounded spin-waits for device code.
//
// POLL_MAYBE_JAILBREAK(cond, maxSpin) spins while `cond` is true. `maxSpin` (an int64_t) bounds the
// wait: when `cond` is still true after it has been re-evaluated `maxSpin` times, the waiting thread
// prints one line and traps. A negative `maxSpin` means no limit: pass -1 to wait forever.
//
// A limit passed explicitly is checked in every build (Debug and Release alike); the cost is one
// compare and one increment per spin. Every wait in the device API takes a `maxSpin` argument and
// forwards it here, so a caller who passes one bounds the wait: a lost signal, a dead peer or a proxy
// that never runs then ends the kernel instead of hanging it.
//
// The API's default limits (MSCCLPP_DEFAULT_MAX_SPIN_COUNT below) apply only in debug builds (those
// that define DEBUG_BUILD, as CMake's Debug configuration of this project does, or
// MSCCLPP_DEVICE_ASSERTS). In other builds a wait called without a limit spins until its condition
// holds, as MSCCL++'s do: a peer that is merely late must not abort a production job's CUDA context.
//
// What the user sees when a limit expires: the failing thread prints
//   mscclpp: spin limit expired at FILE:LINE: still waiting for `COND` after N spins (pass maxSpin=-1
//   to wait without limit) [block (x,y,z) thread (x,y,z)]
// to the device printf buffer (the host prints it at its next synchronization with the device),
// where FILE:LINE is the wait that gave up (for the API's own waits, a line of its headers: the
// condition names the primitive, e.g. the semaphore or FIFO word it was polling),
// then executes a trap. The kernel stops, the host's next synchronization (cudaStreamSynchronize,
// cudaDeviceSynchronize, ...) returns a launch failure, and the CUDA context of the process is
// unusable from then on. Several threads that time out at about the same time each print their line.
//
// A spin is one evaluation of `cond`, so the wall time a limit stands for depends on what `cond`
// reads (host memory over PCIe is slower than device memory); the defaults of the API (1e6 to 1e8)
// are meant as "something is broken", not as timeouts to program against.
//
// Both macros expand to a complete statement, trailing semicolon included, as in MSCCL++: they may be
// written with or without a semicolon after them.
//
// OR_POLL_MAYBE_JAILBREAK(cond1, cond2, maxSpin) spins while both conditions are true, i.e. until
// either becomes false, evaluating `cond1` first and `cond2` only when `cond1` holds (put the cheap
// check first). The limit behaves as above.

#ifndef MSCCLPP_POLL_DEVICE_HPP_
#define MSCCLPP_POLL_DEVICE_HPP_

#include <cstdint>

#include "assert_device.hpp"
#include "device.hpp"

/// The default `maxSpinCount` of the API's waits: `n` in debug builds, no limit (-1) otherwise.
#if defined(DEBUG_BUILD) || defined(MSCCLPP_DEVICE_ASSERTS)
#define MSCCLPP_DEFAULT_MAX_SPIN_COUNT(n) (n)
#else
#define MSCCLPP_DEFAULT_MAX_SPIN_COUNT(n) (-1)
#endif

#if defined(MSCCLPP_DEVICE_COMPILE)

namespace mscclpp {
namespace detail {

// Out of line so that the printf and its arguments stay off the spin loop. The indices are cast as in
// assert_device.hpp (HIP's are objects, not unsigned).
__device__ __noinline__ inline void pollSpinLimitExpired(const char* file, int line, const char* condition,
                                                         int64_t spins) {
  printf(
      "mscclpp: spin limit expired at %s:%d: still waiting for `%s` after %lld spins (pass maxSpin=-1 to wait "
      "without limit) [block (%u,%u,%u) thread (%u,%u,%u)]\n",
      file, line, condition, static_cast<long long>(spins), unsigned(blockIdx.x), unsigned(blockIdx.y),
      unsigned(blockIdx.z), unsigned(threadIdx.x), unsigned(threadIdx.y), unsigned(threadIdx.z));
  MSCCLPP_DEVICE_TRAP();
}

}  // namespace detail
}  // namespace mscclpp

#define POLL_MAYBE_JAILBREAK(cond, maxSpin)                                                      \
  do {                                                                                           \
    const int64_t mscclppPollMaxSpin_ = static_cast<int64_t>(maxSpin);                           \
    int64_t mscclppPollSpins_ = 0;                                                               \
    while (cond) {                                                                               \
      if (mscclppPollMaxSpin_ >= 0 && mscclppPollSpins_++ >= mscclppPollMaxSpin_) {              \
        ::mscclpp::detail::pollSpinLimitExpired(__FILE__, __LINE__, #cond, mscclppPollMaxSpin_); \
      }                                                                                          \
    }                                                                                            \
  } while (0);

#define OR_POLL_MAYBE_JAILBREAK(cond1, cond2, maxSpin) POLL_MAYBE_JAILBREAK((cond1) && (cond2), maxSpin)

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_POLL_DEVICE_HPP_
