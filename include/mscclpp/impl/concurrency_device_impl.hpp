// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Inline bodies of concurrency_device.hpp (device compilation only).

#ifndef MSCCLPP_IMPL_CONCURRENCY_DEVICE_IMPL_HPP_
#define MSCCLPP_IMPL_CONCURRENCY_DEVICE_IMPL_HPP_

#include "../atomic_device.hpp"
#include "../concurrency_device.hpp"
#include "../poll_device.hpp"

// Device compilation only: a host compiler sees the declarations alone.
#if defined(MSCCLPP_DEVICE_COMPILE)

namespace mscclpp {

MSCCLPP_DEVICE_INLINE void DeviceSyncer::sync(int blockNum, int64_t maxSpinCount) {
  __syncthreads();
  if (blockNum <= 1) return;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned int target = static_cast<unsigned int>(blockNum);
    const unsigned int cur =
        (atomicLoad<unsigned int, scopeDevice>(&currentCountIdx_, memoryOrderRelaxed) + 1) % NumCounters;
    const unsigned int next = (cur + 1) % NumCounters;
    // Every block reaches this store before its arrival below, and no block can arrive at the next
    // round before seeing all arrivals of this one, so the zero is in place before anyone counts on it.
    atomicStore<unsigned int, scopeDevice>(&count_[next], 0u, memoryOrderRelaxed);
    atomicFetchAdd<unsigned int, scopeDevice>(&count_[cur], 1u, memoryOrderRelease);
    POLL_MAYBE_JAILBREAK((atomicLoad<unsigned int, scopeDevice>(&count_[cur], memoryOrderAcquire) != target),
                         maxSpinCount)
    atomicStore<unsigned int, scopeDevice>(&currentCountIdx_, cur, memoryOrderRelaxed);
  }
  // The other threads of the block learn of the arrival (and inherit the acquire) through the barrier.
  __syncthreads();
}

MSCCLPP_DEVICE_INLINE void DeviceSemaphore::set(int value) {
  atomicStore<int, scopeDevice>(&semaphore_, value, memoryOrderRelaxed);
}

MSCCLPP_DEVICE_INLINE bool DeviceSemaphore::tryAcquire() {
  const int available = atomicLoad<int, scopeDevice>(&semaphore_, memoryOrderRelaxed);
  return available > 0 &&
         detail::atomicCompareExchangeWeak<int, scopeDevice>(&semaphore_, available, available - 1, memoryOrderAcquire);
}

MSCCLPP_DEVICE_INLINE void DeviceSemaphore::acquire(int maxSpinCount){
    POLL_MAYBE_JAILBREAK((!tryAcquire()), maxSpinCount)}

MSCCLPP_DEVICE_INLINE void DeviceSemaphore::release() {
  atomicFetchAdd<int, scopeDevice>(&semaphore_, 1, memoryOrderRelease);
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_IMPL_CONCURRENCY_DEVICE_IMPL_HPP_
