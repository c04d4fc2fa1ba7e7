// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Synchronization among the blocks of one kernel on one GPU.

#ifndef MSCCLPP_CONCURRENCY_DEVICE_HPP_
#define MSCCLPP_CONCURRENCY_DEVICE_HPP_

#include <cstdint>

#include "atomic_device.hpp"
#include "device.hpp"
#include "poll_device.hpp"

namespace mscclpp {

/// A reusable barrier across the blocks of a grid (16 bytes). Place it in zeroed global memory
/// (a zero-initialized __device__ variable or cudaMemset) and have `blockNum` blocks call sync() the
/// same number of times. The blocks must be co-resident (e.g. a cooperative launch, or no more
/// blocks than the GPU runs at once); otherwise the barrier deadlocks until its spin limit fires.
///
/// Every write made by any thread of a participating block before sync() is visible to every thread
/// of every participating block after it (device-scope release/acquire, bracketed by __syncthreads).
struct DeviceSyncer {
 public:
  static const unsigned int NumCounters = 3;

  DeviceSyncer() = default;

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// Waits until all `blockNum` blocks have arrived. Thread (0,0,0) of each block waits for the
  /// others, at most `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void sync(int blockNum, int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(100000000));
#endif

 private:
  // Arrival counters used in rotation: the one for this round, the one for the next round (zeroed on
  // arrival, when no block can still be using it), and the one of the previous round (which slower
  // blocks may still be polling).
  [[maybe_unused]] unsigned int count_[NumCounters];
  // Index of the counter of the last completed round; equal in every block that has passed it.
  [[maybe_unused]] unsigned int currentCountIdx_;
};

/// A counting semaphore for the threads of one GPU (4 bytes, device scope). acquire() takes one unit,
/// waiting while none is available; release() returns one.
struct DeviceSemaphore {
 public:
  DeviceSemaphore() = default;
  MSCCLPP_HOST_DEVICE_INLINE DeviceSemaphore(int initialValue) : semaphore_(initialValue) {}

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// Sets the count (relaxed): only while no thread acquires or releases concurrently.
  MSCCLPP_DEVICE_INLINE void set(int value);

  /// Takes one unit with acquire order, waiting at most `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void acquire(int maxSpinCount = -1);

  /// Returns one unit with release order.
  MSCCLPP_DEVICE_INLINE void release();
#endif

 private:
#if defined(MSCCLPP_DEVICE_COMPILE)
  MSCCLPP_DEVICE_INLINE bool tryAcquire();
#endif

  [[maybe_unused]] int semaphore_;
};

}  // namespace mscclpp

#if defined(MSCCLPP_DEVICE_COMPILE)
#include "impl/concurrency_device_impl.hpp"
#endif

#endif  // MSCCLPP_CONCURRENCY_DEVICE_HPP_
