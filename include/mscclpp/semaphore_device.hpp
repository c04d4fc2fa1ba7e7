// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device handles of the semaphores (semaphore.hpp): monotonically growing 64-bit counters ("tokens")
// that one side increments and the other waits on.
//
// A semaphore pairs an *inbound* token, which the peer writes, with an *expected* counter private to
// the waiter: each wait consumes one signal by incrementing `expected` and spinning until
// `inbound >= expected`. Signals are never lost and never coalesce into fewer waits: after n signals,
// exactly n waits return. The signaler keeps its own *outbound* count and writes the new value to
// the peer's inbound token (a store, not an atomic add), so each handle must be signaled by one
// thread at a time and waited on by one thread at a time.
//
// Memory ordering (what a successful wait guarantees):
// - signal() stores with system-scope release order, wait()/poll() load with system-scope acquire
//   order: every write the signaling thread made (or observed, e.g. through __syncthreads) before
//   signal() is visible to the waiting thread after wait() returns, across GPUs and the host.
// - relaxedSignal()/relaxedWait() order nothing but the token itself; use them when the data carries
//   its own validity (packets) or when a fence elsewhere orders it.
// - The expected counter is incremented with a device-scope relaxed fetch_add, so several threads may
//   wait at once, each consuming its own signal. The outbound counter has a single writer (the one
//   signaling thread), so signal() increments it with plain loads and stores, which the SM's L1 cache
//   serves, instead of a fetch_add's round trip to L2 on every signal. incOutbound() stays a
//   fetch_add for callers that count signals themselves.
// - signal() reads the counter, issues its system-scope release as a fence, then stores the counter
//   and the token (relaxed): a store-release would also wait for the counter's store to drain, and a
//   read after the fence would add its own round trip. The fence is the price of the ordering: on an
//   H200 a raw hop takes about 0.3 us, the same hop with a system-scope store-release about 0.8 us.

#ifndef MSCCLPP_SEMAPHORE_DEVICE_HPP_
#define MSCCLPP_SEMAPHORE_DEVICE_HPP_

#include <cstdint>

#include "device.hpp"

#if defined(MSCCLPP_DEVICE_COMPILE)
#include "atomic_device.hpp"
#include "poll_device.hpp"
#endif

namespace mscclpp {

/// Device handle of a Host2DeviceSemaphore: the host signals, the device waits (16 bytes).
struct Host2DeviceSemaphoreDeviceHandle {
  /// Written by the host (or the proxy on its behalf); read by this GPU.
  uint64_t* inboundToken;
  /// Number of signals consumed so far (device memory).
  uint64_t* expectedInboundToken;

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// If a signal is pending, consumes it and returns true; otherwise returns false at once.
  MSCCLPP_DEVICE_INLINE bool poll() {
    if (loadInbound() > loadExpectedInbound()) {
      incExpectedInbound();
      return true;
    }
    return false;
  }

  /// Consumes one signal, waiting for it at most `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void wait(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(100000000)) {
    const uint64_t expected = incExpectedInbound();
    POLL_MAYBE_JAILBREAK((loadInbound() < expected), maxSpinCount)
  }

  MSCCLPP_DEVICE_INLINE uint64_t loadExpectedInbound() {
    return atomicLoad<uint64_t, scopeDevice>(expectedInboundToken, memoryOrderRelaxed);
  }

  /// Increments the expected count and returns the new value.
  MSCCLPP_DEVICE_INLINE uint64_t incExpectedInbound() {
    return atomicFetchAdd<uint64_t, scopeDevice>(expectedInboundToken, 1, memoryOrderRelaxed) + 1;
  }

  /// The inbound token, with system-scope acquire order.
  MSCCLPP_DEVICE_INLINE uint64_t loadInbound() {
    return atomicLoad<uint64_t, scopeSystem>(inboundToken, memoryOrderAcquire);
  }
#endif
};

/// Device handle of a MemoryDevice2DeviceSemaphore: two GPUs signal each other directly through
/// mapped memory, without a proxy (32 bytes).
struct MemoryDevice2DeviceSemaphoreDeviceHandle {
  /// This side's token, written by the peer.
  uint64_t* inboundToken;
  /// Number of signals this side has sent (device memory).
  uint64_t* outboundToken;
  /// The peer's inbound token, mapped into this GPU's address space.
  uint64_t* remoteInboundToken;
  /// Number of signals this side has consumed (device memory).
  uint64_t* expectedInboundToken;

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// If a signal is pending, consumes it and returns true; otherwise returns false at once.
  MSCCLPP_DEVICE_INLINE bool poll() {
    if (loadInbound() > loadExpectedInbound()) {
      incExpectedInbound();
      return true;
    }
    return false;
  }

  /// Consumes one signal with acquire order, waiting at most `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void wait(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(100000000)) {
    const uint64_t expected = incExpectedInbound();
    POLL_MAYBE_JAILBREAK((loadInbound() < expected), maxSpinCount)
  }

  /// Consumes one signal without ordering other memory accesses.
  MSCCLPP_DEVICE_INLINE void relaxedWait(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(100000000)) {
    const uint64_t expected = incExpectedInbound();
    POLL_MAYBE_JAILBREAK((loadInboundRelaxed() < expected), maxSpinCount)
  }

  /// Signals the peer: all memory writes before the call are visible to the peer once its wait
  /// returns. One signaling thread per handle.
  MSCCLPP_DEVICE_INLINE void signal();

  /// Signals the peer without ordering other memory accesses. One signaling thread per handle.
  MSCCLPP_DEVICE_INLINE void relaxedSignal() {
    atomicStore<uint64_t, scopeSystem>(remoteInboundToken, nextOutbound(), memoryOrderRelaxed);
  }

  MSCCLPP_DEVICE_INLINE uint64_t loadInbound() {
    return atomicLoad<uint64_t, scopeSystem>(inboundToken, memoryOrderAcquire);
  }

  MSCCLPP_DEVICE_INLINE uint64_t loadInboundRelaxed() {
    return atomicLoad<uint64_t, scopeSystem>(inboundToken, memoryOrderRelaxed);
  }

  MSCCLPP_DEVICE_INLINE uint64_t loadExpectedInbound() {
    return atomicLoad<uint64_t, scopeDevice>(expectedInboundToken, memoryOrderRelaxed);
  }

  /// Increments the expected count and returns the new value.
  MSCCLPP_DEVICE_INLINE uint64_t incExpectedInbound() {
    return atomicFetchAdd<uint64_t, scopeDevice>(expectedInboundToken, 1, memoryOrderRelaxed) + 1;
  }

  MSCCLPP_DEVICE_INLINE uint64_t loadOutbound() {
    return atomicLoad<uint64_t, scopeDevice>(outboundToken, memoryOrderRelaxed);
  }

  /// Increments the outbound count and returns the new value.
  MSCCLPP_DEVICE_INLINE uint64_t incOutbound() {
    return atomicFetchAdd<uint64_t, scopeDevice>(outboundToken, 1, memoryOrderRelaxed) + 1;
  }

 private:
  /// The signaling thread's increment of the outbound count: plain accesses (see the file comment).
  MSCCLPP_DEVICE_INLINE uint64_t nextOutbound() { return ++*outboundToken; }

 public:
#endif
};

using SmDevice2DeviceSemaphoreDeviceHandle [[deprecated("use MemoryDevice2DeviceSemaphoreDeviceHandle")]] =
    MemoryDevice2DeviceSemaphoreDeviceHandle;

#if defined(MSCCLPP_DEVICE_COMPILE)
MSCCLPP_DEVICE_INLINE void MemoryDevice2DeviceSemaphoreDeviceHandle::signal() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900)
  // Before Hopper the signal is a sequentially consistent store: the conservative choice on hardware
  // where the release form has not been validated (the project's GPU runs are on sm_90).
  atomicStore<uint64_t, scopeSystem>(remoteInboundToken, nextOutbound(), memoryOrderSeqCst);
#else
  // The count is read before the fence, so that the read overlaps the fence's wait: a wait()'s
  // acquire loads invalidate the L1 copy, and the read then goes to L2. A release fence followed by a
  // relaxed store is a release of that store.
  const uint64_t value = *outboundToken + 1;
  detail::atomicFence<scopeSystem>(memoryOrderRelease);
  *outboundToken = value;
  atomicStore<uint64_t, scopeSystem>(remoteInboundToken, value, memoryOrderRelaxed);
#endif
}
#endif

}  // namespace mscclpp

#endif  // MSCCLPP_SEMAPHORE_DEVICE_HPP_
