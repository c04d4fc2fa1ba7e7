// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Atomic load, store and fetch-add on plain memory words, usable from host and device code alike.
//
// Every cross-agent protocol in the device API (semaphores, the proxy FIFO, the grid barrier) is
// written with these three functions (and the fence and compare-exchange in `detail`) and nothing
// else, so its ordering is stated in one vocabulary: a memory order (memoryOrderRelaxed ...
// memoryOrderSeqCst) and a scope (scopeSystem: other GPUs and the CPU may observe the word;
// scopeDevice: only threads of this GPU do). The scope is a promise by the caller; a wider scope than
// needed is correct but slower.
//
// Under nvcc the functions are cuda::atomic_ref operations (libcu++), on host and device alike. A
// plain host compiler and HIP use the GCC/Clang __atomic builtins; there the scope is accepted and
// ignored, because a host or HIP atomic is always system-wide.
//
// Host code of the library reads and writes words shared with the GPU, a NIC or a receiver thread
// (FIFO slots and tail, semaphore tokens) with these functions too, not with std::atomic: those words
// are plain memory (pinned host or GPU memory, a user's registered buffer) that was never constructed
// as std::atomic objects, and the GPU side accesses the same words through this header, so one
// vocabulary states both halves of each protocol.

#ifndef MSCCLPP_ATOMIC_DEVICE_HPP_
#define MSCCLPP_ATOMIC_DEVICE_HPP_

#include <cstdint>

#include "device.hpp"

#if defined(MSCCLPP_DEVICE_CUDA)
#include <cuda/atomic>
#endif

namespace mscclpp {

#if defined(MSCCLPP_DEVICE_CUDA)

constexpr cuda::memory_order memoryOrderRelaxed = cuda::memory_order_relaxed;
constexpr cuda::memory_order memoryOrderAcquire = cuda::memory_order_acquire;
constexpr cuda::memory_order memoryOrderRelease = cuda::memory_order_release;
constexpr cuda::memory_order memoryOrderAcqRel = cuda::memory_order_acq_rel;
constexpr cuda::memory_order memoryOrderSeqCst = cuda::memory_order_seq_cst;

constexpr cuda::thread_scope scopeSystem = cuda::thread_scope_system;
constexpr cuda::thread_scope scopeDevice = cuda::thread_scope_device;

/// Loads *ptr atomically with `memoryOrder` (relaxed, acquire or seq_cst).
template <typename T, cuda::thread_scope Scope = cuda::thread_scope_system>
MSCCLPP_HOST_DEVICE_INLINE T atomicLoad(const T* ptr, cuda::memory_order memoryOrder) {
  return cuda::atomic_ref<T, Scope>{*const_cast<T*>(ptr)}.load(memoryOrder);
}

/// The same for a non-const pointer (the signature MSCCL++ declares).
template <typename T, cuda::thread_scope Scope = cuda::thread_scope_system>
MSCCLPP_HOST_DEVICE_INLINE T atomicLoad(T* ptr, cuda::memory_order memoryOrder) {
  return cuda::atomic_ref<T, Scope>{*ptr}.load(memoryOrder);
}

/// Stores `val` to *ptr atomically with `memoryOrder` (relaxed, release or seq_cst).
template <typename T, cuda::thread_scope Scope = cuda::thread_scope_system>
MSCCLPP_HOST_DEVICE_INLINE void atomicStore(T* ptr, const T& val, cuda::memory_order memoryOrder) {
  cuda::atomic_ref<T, Scope>{*ptr}.store(val, memoryOrder);
}

/// Adds `val` to *ptr atomically and returns the value *before* the addition.
template <typename T, cuda::thread_scope Scope = cuda::thread_scope_system>
MSCCLPP_HOST_DEVICE_INLINE T atomicFetchAdd(T* ptr, const T& val, cuda::memory_order memoryOrder) {
  return cuda::atomic_ref<T, Scope>{*ptr}.fetch_add(val, memoryOrder);
}

namespace detail {
/// A memory fence with `memoryOrder` (release: orders every earlier access before every later store)
/// over `Scope`.
template <cuda::thread_scope Scope = cuda::thread_scope_system>
MSCCLPP_HOST_DEVICE_INLINE void atomicFence(cuda::memory_order memoryOrder) {
  cuda::atomic_thread_fence(memoryOrder, Scope);
}

/// Replaces *ptr by `desired` if it equals `expected`; returns whether it did. May fail spuriously,
/// so call it in a loop.
template <typename T, cuda::thread_scope Scope = cuda::thread_scope_system>
MSCCLPP_HOST_DEVICE_INLINE bool atomicCompareExchangeWeak(T* ptr, T expected, T desired,
                                                          cuda::memory_order memoryOrder) {
  return cuda::atomic_ref<T, Scope>{*ptr}.compare_exchange_weak(expected, desired, memoryOrder,
                                                                cuda::memory_order_relaxed);
}
}  // namespace detail

#else  // a plain host compiler, or HIP

constexpr int memoryOrderRelaxed = __ATOMIC_RELAXED;
constexpr int memoryOrderAcquire = __ATOMIC_ACQUIRE;
constexpr int memoryOrderRelease = __ATOMIC_RELEASE;
constexpr int memoryOrderAcqRel = __ATOMIC_ACQ_REL;
constexpr int memoryOrderSeqCst = __ATOMIC_SEQ_CST;

constexpr int scopeSystem = 0;
constexpr int scopeDevice = 1;

/// Loads *ptr atomically with `memoryOrder` (relaxed, acquire or seq_cst).
template <typename T, int Scope = scopeSystem>
MSCCLPP_HOST_DEVICE_INLINE T atomicLoad(const T* ptr, int memoryOrder) {
  return __atomic_load_n(ptr, memoryOrder);
}

/// Stores `val` to *ptr atomically with `memoryOrder` (relaxed, release or seq_cst).
template <typename T, int Scope = scopeSystem>
MSCCLPP_HOST_DEVICE_INLINE void atomicStore(T* ptr, const T& val, int memoryOrder) {
  __atomic_store_n(ptr, val, memoryOrder);
}

/// Adds `val` to *ptr atomically and returns the value *before* the addition.
template <typename T, int Scope = scopeSystem>
MSCCLPP_HOST_DEVICE_INLINE T atomicFetchAdd(T* ptr, const T& val, int memoryOrder) {
  return __atomic_fetch_add(ptr, val, memoryOrder);
}

namespace detail {
/// A memory fence with `memoryOrder` (release: orders every earlier access before every later store).
template <int Scope = scopeSystem>
MSCCLPP_HOST_DEVICE_INLINE void atomicFence(int memoryOrder) {
  __atomic_thread_fence(memoryOrder);
}

/// Replaces *ptr by `desired` if it equals `expected`; returns whether it did. May fail spuriously,
/// so call it in a loop.
template <typename T, int Scope = scopeSystem>
MSCCLPP_HOST_DEVICE_INLINE bool atomicCompareExchangeWeak(T* ptr, T expected, T desired, int memoryOrder) {
  return __atomic_compare_exchange_n(ptr, &expected, desired, true, memoryOrder, __ATOMIC_RELAXED);
}
}  // namespace detail

#endif

}  // namespace mscclpp

#endif  // MSCCLPP_ATOMIC_DEVICE_HPP_
