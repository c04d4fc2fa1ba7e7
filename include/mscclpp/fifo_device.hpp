// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The device side of the proxy FIFO: GPU threads push 16-byte requests (ProxyTrigger) that a single
// host thread (the proxy, see proxy.hpp) pops and executes, e.g. as a DMA or RDMA write.
//
// The FIFO is a ring of `size` slots. `head` (device memory) counts pushes and is advanced by any
// number of device threads with an atomic fetch-add; `tail` (mapped pinned host memory) counts pops
// and is advanced by the proxy only. A slot is free again once the proxy has popped it: a pusher that
// is `size` or more ahead of the tail waits for the tail first. `tailCache` (device memory) keeps the
// last tail a device thread saw, so that pushes into a FIFO with room skip the read over PCIe.

#ifndef MSCCLPP_FIFO_DEVICE_HPP_
#define MSCCLPP_FIFO_DEVICE_HPP_

#include <cstdint>

#include "atomic_device.hpp"
#include "device.hpp"
#include "poll_device.hpp"

namespace mscclpp {

using TriggerType = uint64_t;
/// The proxy copies `size` bytes from (srcMemoryId, srcOffset) to (dstMemoryId, dstOffset).
constexpr TriggerType TriggerData = 0x1;
/// The proxy signals the semaphore `semaphoreId` (after the data of the same trigger, if any).
constexpr TriggerType TriggerFlag = 0x2;
/// The proxy flushes the connection: everything requested before is complete when it pops the next.
constexpr TriggerType TriggerSync = 0x4;

constexpr unsigned int TriggerBitsSize = 32;
constexpr unsigned int TriggerBitsOffset = 32;
constexpr unsigned int TriggerBitsMemoryId = 9;
constexpr unsigned int TriggerBitsType = 3;
constexpr unsigned int TriggerBitsSemaphoreId = 10;
constexpr unsigned int TriggerBitsFifoReserved = 1;

/// One FIFO request: two 64-bit words read either raw (fst, snd) or as bit fields.
///   fst: size [0,32) | srcOffset [32,64)
///   snd: dstOffset [0,32) | srcMemoryId [32,41) | dstMemoryId [41,50) | type [50,53) | semaphoreId [53,63)
///        | bit 63: the valid bit, flipped by FifoDeviceHandle::push so that a pushed snd is never 0
///          (the proxy reads a slot as ready when fst and snd are both non-zero, and clears the bit).
/// The field `reserved` lives in a third word (the unnamed zero-width field closes the second one), so
/// sizeof(ProxyTrigger) is 32: that is the FIFO slot stride, part of the ABI.
union alignas(16) ProxyTrigger {
  struct {
    uint64_t fst, snd;
  };
  struct {
    uint64_t size : TriggerBitsSize;
    uint64_t srcOffset : TriggerBitsOffset;
    uint64_t dstOffset : TriggerBitsOffset;
    uint64_t srcMemoryId : TriggerBitsMemoryId;
    uint64_t dstMemoryId : TriggerBitsMemoryId;
    uint64_t type : TriggerBitsType;
    uint64_t semaphoreId : TriggerBitsSemaphoreId;
    uint64_t : 0;
    uint64_t reserved : TriggerBitsFifoReserved;
  } fields;

  ProxyTrigger() = default;

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// A request of `type` (TriggerData | TriggerFlag | TriggerSync). Debug builds assert that every
  /// value fits its field and that `bytes` is not 0 (which keeps fst non-zero; Flag and Sync requests
  /// pass 1).
  MSCCLPP_DEVICE_INLINE ProxyTrigger(TriggerType type, uint32_t dst, uint64_t dstOffset, uint32_t src,
                                     uint64_t srcOffset, uint64_t bytes, uint32_t semaphoreId);
#endif
};

/// The device's view of a Fifo (a POD copied into kernels; the host Fifo owns the memory).
/// Any number of device threads may push concurrently.
struct FifoDeviceHandle {
  /// `size` slots in mapped pinned host memory, written by the device, read and cleared by the proxy.
  ProxyTrigger* triggers;
  /// Number of pushes so far (device memory).
  uint64_t* head;
  /// Number of pops so far (mapped pinned host memory; written by the proxy with release order).
  uint64_t* tail;
  /// The last tail seen by a device thread (device memory); never ahead of `tail`.
  uint64_t* tailCache;
  int size;

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// Appends `trigger` and returns its position (the head before the push). Waits for a free slot
  /// when the FIFO is full, at most `maxSpinCount` polls of the tail (negative: no limit). The slot is
  /// written with system-scope release order, so the proxy that reads it also sees every write this
  /// thread made (or observed) before the push.
  MSCCLPP_DEVICE_INLINE uint64_t push(ProxyTrigger trigger,
                                      int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000));

  /// Whether the proxy has popped the request at position `fifoHead` (tail > fifoHead). Refreshes
  /// tailCache.
  MSCCLPP_DEVICE_INLINE bool poll(uint64_t fifoHead);

  /// Waits until the proxy has popped the request at position `fifoHead`, at most `maxSpinCount` polls
  /// of the tail (negative: no limit). Refreshes tailCache.
  MSCCLPP_DEVICE_INLINE void sync(uint64_t fifoHead, int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000));
#endif
};

namespace detail {
/// Bit 63 of ProxyTrigger::snd.
constexpr uint64_t TriggerValidBitMask = uint64_t{1} << 63;
}  // namespace detail

}  // namespace mscclpp

#if defined(MSCCLPP_DEVICE_COMPILE)
#include "impl/fifo_device_impl.hpp"
#endif

#endif  // MSCCLPP_FIFO_DEVICE_HPP_
