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
// - The private counters (expected, outbound) are device-scope relaxed atomics.

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
  MSCCLPP_DEVICE_INLINE void wait(int64_t maxSpinCount = 100000000) {
    const uint64_t expected = incExpectedInbound();
    POLL_MAYBE_JAILBREAK((loadInbound() < expected), maxSpinCount);
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
  MSCCLPP_DEVICE_INLINE void wait(int64_t maxSpinCount = 100000000) {
    const uint64_t expected = incExpectedInbound();
    POLL_MAYBE_JAILBREAK((loadInbound() < expected), maxSpinCount);
  }

  /// Consumes one signal without ordering other memory accesses.
  MSCCLPP_DEVICE_INLINE void relaxedWait(int64_t maxSpinCount = 100000000) {
    const uint64_t expected = incExpectedInbound();
    POLL_MAYBE_JAILBREAK((loadInboundRelaxed() < expected), maxSpinCount);
  }

  /// Signals the peer: all memory writes before the call are visible to the peer once its wait
  /// returns. One signaling thread per handle.
  MSCCLPP_DEVICE_INLINE void signal();

  /// Signals the peer without ordering other memory accesses. One signaling thread per handle.
  MSCCLPP_DEVICE_INLINE void relaxedSignal() {
    atomicStore<uint64_t, scopeSystem>(remoteInboundToken, incOutbound(), memoryOrderRelaxed);
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
#endif
};

using SmDevice2DeviceSemaphoreDeviceHandle [[deprecated("use MemoryDevice2DeviceSemaphoreDeviceHandle")]] =
    MemoryDevice2DeviceSemaphoreDeviceHandle;

#if defined(MSCCLPP_DEVICE_COMPILE)
MSCCLPP_DEVICE_INLINE void MemoryDevice2DeviceSemaphoreDeviceHandle::signal() {
  const uint64_t value = incOutbound();
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900)
  // Before Hopper the signal is a sequentially consistent store: the conservative choice on hardware
  // where the release form has not been validated (the project's GPU runs are on sm_90).
  atomicStore<uint64_t, scopeSystem>(remoteInboundToken, value, memoryOrderSeqCst);
#else
  atomicStore<uint64_t, scopeSystem>(remoteInboundToken, value, memoryOrderRelease);
#endif
}
#endif

}  // namespace mscclpp

#endif  // MSCCLPP_SEMAPHORE_DEVICE_HPP_
