// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device handles of port channels (port_channel.hpp): a kernel asks the host proxy to move data and
// to signal the peer by pushing requests into the proxy's FIFO, and waits for the peer's signals on a
// Host2DeviceSemaphore.
//
// Requests are executed in FIFO order by one proxy thread. put() only queues the copy; a later
// signal() on the same channel reaches the peer after that data (the proxy signals after the writes
// it issued before). flush() (and the *AndFlush variants) additionally wait until the proxy has
// processed the request, i.e. until the queued transfers are complete and the source may be reused.
// Offsets and sizes are bytes; memory and semaphore ids are the ProxyService's indices.

#ifndef MSCCLPP_PORT_CHANNEL_DEVICE_HPP_
#define MSCCLPP_PORT_CHANNEL_DEVICE_HPP_

#include <cstdint>

#include "device.hpp"
#include "fifo_device.hpp"
#include "semaphore_device.hpp"

namespace mscclpp {

/// Index of a semaphore in a ProxyService.
using SemaphoreId = uint32_t;
/// Index of a registered memory in a ProxyService.
using MemoryId = uint32_t;

/// A port channel whose source and destination memories are chosen per request (64 bytes).
struct BasePortChannelDeviceHandle {
  SemaphoreId semaphoreId_;
  /// Signaled by the proxy when the peer signals this channel.
  Host2DeviceSemaphoreDeviceHandle semaphore_;
  /// The proxy's FIFO; shared by the channels of one ProxyService.
  FifoDeviceHandle fifo_;

  BasePortChannelDeviceHandle() = default;

  MSCCLPP_HOST_DEVICE_INLINE BasePortChannelDeviceHandle(SemaphoreId semaphoreId,
                                                         Host2DeviceSemaphoreDeviceHandle semaphore,
                                                         FifoDeviceHandle fifo)
      : semaphoreId_(semaphoreId), semaphore_(semaphore), fifo_(fifo) {}

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// Queues a copy of `size` bytes from (srcId, srcOffset) to (dstId, dstOffset).
  MSCCLPP_DEVICE_INLINE void put(MemoryId dstId, uint64_t dstOffset, MemoryId srcId, uint64_t srcOffset,
                                 uint64_t size) {
    fifo_.push({TriggerData, dstId, dstOffset, srcId, srcOffset, size, semaphoreId_});
  }

  /// put() with the same offset on both sides.
  MSCCLPP_DEVICE_INLINE void put(MemoryId dstId, MemoryId srcId, uint64_t offset, uint64_t size) {
    put(dstId, offset, srcId, offset, size);
  }

  /// Queues a signal of the peer's semaphore, delivered after the data queued before it.
  MSCCLPP_DEVICE_INLINE void signal() { fifo_.push({TriggerFlag, 0, 0, 0, 0, 1, semaphoreId_}); }

  /// put() and signal() in one request.
  MSCCLPP_DEVICE_INLINE void putWithSignal(MemoryId dstId, uint64_t dstOffset, MemoryId srcId, uint64_t srcOffset,
                                           uint64_t size) {
    fifo_.push({TriggerData | TriggerFlag, dstId, dstOffset, srcId, srcOffset, size, semaphoreId_});
  }

  MSCCLPP_DEVICE_INLINE void putWithSignal(MemoryId dstId, MemoryId srcId, uint64_t offset, uint64_t size) {
    putWithSignal(dstId, offset, srcId, offset, size);
  }

  /// put(), signal() and flush() in one request; waits at most `maxSpinCount` polls (negative: no
  /// limit) for the proxy to process it.
  MSCCLPP_DEVICE_INLINE void putWithSignalAndFlush(MemoryId dstId, uint64_t dstOffset, MemoryId srcId,
                                                   uint64_t srcOffset, uint64_t size,
                                                   int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000)) {
    const uint64_t pos =
        fifo_.push({TriggerData | TriggerFlag | TriggerSync, dstId, dstOffset, srcId, srcOffset, size, semaphoreId_});
    fifo_.sync(pos, maxSpinCount);
  }

  MSCCLPP_DEVICE_INLINE void putWithSignalAndFlush(MemoryId dstId, MemoryId srcId, uint64_t offset, uint64_t size,
                                                   int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000)) {
    putWithSignalAndFlush(dstId, offset, srcId, offset, size, maxSpinCount);
  }

  /// Waits until every request queued before on this channel's connection is complete, at most
  /// `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void flush(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000)) {
    const uint64_t pos = fifo_.push({TriggerSync, 0, 0, 0, 0, 1, semaphoreId_});
    fifo_.sync(pos, maxSpinCount);
  }

  /// If the peer has signaled, consumes the signal and returns true.
  MSCCLPP_DEVICE_INLINE bool poll() { return semaphore_.poll(); }

  /// Consumes one signal of the peer, waiting at most `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void wait(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(10000000)) {
    semaphore_.wait(maxSpinCount);
  }
#endif
};

/// A port channel bound to one destination and one source memory (72 bytes).
struct PortChannelDeviceHandle : public BasePortChannelDeviceHandle {
  MemoryId dst_;
  MemoryId src_;

  PortChannelDeviceHandle() = default;

  MSCCLPP_HOST_DEVICE_INLINE PortChannelDeviceHandle(SemaphoreId semaphoreId,
                                                     Host2DeviceSemaphoreDeviceHandle semaphore, FifoDeviceHandle fifo,
                                                     MemoryId dst, MemoryId src)
      : BasePortChannelDeviceHandle(semaphoreId, semaphore, fifo), dst_(dst), src_(src) {}

#if defined(MSCCLPP_DEVICE_COMPILE)
  // These overloads hide the base class's (call them through BasePortChannelDeviceHandle:: to name
  // other memories): with both sets visible, calls with integer literals would be ambiguous.

  /// Queues a copy of `size` bytes from src_ at srcOffset to dst_ at dstOffset.
  MSCCLPP_DEVICE_INLINE void put(uint64_t dstOffset, uint64_t srcOffset, uint64_t size) {
    BasePortChannelDeviceHandle::put(dst_, dstOffset, src_, srcOffset, size);
  }

  MSCCLPP_DEVICE_INLINE void put(uint64_t offset, uint64_t size) { put(offset, offset, size); }

  MSCCLPP_DEVICE_INLINE void putWithSignal(uint64_t dstOffset, uint64_t srcOffset, uint64_t size) {
    BasePortChannelDeviceHandle::putWithSignal(dst_, dstOffset, src_, srcOffset, size);
  }

  MSCCLPP_DEVICE_INLINE void putWithSignal(uint64_t offset, uint64_t size) { putWithSignal(offset, offset, size); }

  MSCCLPP_DEVICE_INLINE void putWithSignalAndFlush(uint64_t dstOffset, uint64_t srcOffset, uint64_t size,
                                                   int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000)) {
    BasePortChannelDeviceHandle::putWithSignalAndFlush(dst_, dstOffset, src_, srcOffset, size, maxSpinCount);
  }

  /// Waits with the default limit: a limit argument would make (offset, size, limit) ambiguous with
  /// (dstOffset, srcOffset, size).
  MSCCLPP_DEVICE_INLINE void putWithSignalAndFlush(uint64_t offset, uint64_t size) {
    putWithSignalAndFlush(offset, offset, size);
  }
#endif
};

}  // namespace mscclpp

#endif  // MSCCLPP_PORT_CHANNEL_DEVICE_HPP_
