// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device handles of memory channels (memory_channel.hpp): the peer's memory is mapped into this GPU's
// address space, so kernel threads read and write it directly, and the two GPUs signal each other
// through a MemoryDevice2DeviceSemaphore without any host involvement.
//
// Naming: "target" is the peer's memory (dst_), "origin" is local memory (src_); put() copies origin to
// target, get() target to origin (its two offsets apply the other way round: see there). Data moved
// with put()/get()/write() is published to the peer by a following signal() (release) that the peer
// consumes with wait() (acquire). Data moved as packets
// (putPackets) needs no signal: the reader waits on each packet's flag (packet_device.hpp).

#ifndef MSCCLPP_MEMORY_CHANNEL_DEVICE_HPP_
#define MSCCLPP_MEMORY_CHANNEL_DEVICE_HPP_

#include <cstdint>
#include <type_traits>

#include "copy_device.hpp"
#include "device.hpp"
#include "packet_device.hpp"
#include "semaphore_device.hpp"

#if defined(MSCCLPP_DEVICE_COMPILE)
#include "assert_device.hpp"
#endif

namespace mscclpp {

/// A memory channel used for signaling only (32 bytes).
struct BaseMemoryChannelDeviceHandle {
  MemoryDevice2DeviceSemaphoreDeviceHandle semaphore_;

  BaseMemoryChannelDeviceHandle() = default;

  MSCCLPP_HOST_DEVICE_INLINE BaseMemoryChannelDeviceHandle(MemoryDevice2DeviceSemaphoreDeviceHandle semaphore)
      : semaphore_(semaphore) {}

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// Signals the peer; every write before it is visible to the peer after its wait(). One signaling
  /// thread at a time.
  MSCCLPP_DEVICE_INLINE void signal() { semaphore_.signal(); }

  /// Signals the peer without ordering other memory accesses.
  MSCCLPP_DEVICE_INLINE void relaxedSignal() { semaphore_.relaxedSignal(); }

  /// If the peer has signaled, consumes the signal and returns true.
  MSCCLPP_DEVICE_INLINE bool poll() { return semaphore_.poll(); }

  /// Consumes one signal of the peer, waiting at most `maxSpinCount` polls (negative: no limit).
  MSCCLPP_DEVICE_INLINE void wait(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(10000000)) {
    semaphore_.wait(maxSpinCount);
  }

  /// wait() without ordering other memory accesses.
  MSCCLPP_DEVICE_INLINE void relaxedWait(int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(10000000)) {
    semaphore_.relaxedWait(maxSpinCount);
  }
#endif
};

/// A memory channel with a target (the peer's buffer), an origin (a local buffer) and, optionally, a
/// local packet buffer that the peer writes packets into (56 bytes).
struct MemoryChannelDeviceHandle : public BaseMemoryChannelDeviceHandle {
  /// The peer's memory, mapped locally.
  void* dst_;
  /// Local memory.
  void* src_;
  /// Local buffer the peer's putPackets() write into; may be null if packets are not used.
  void* packetBuffer_;

  MemoryChannelDeviceHandle() = default;

  MSCCLPP_HOST_DEVICE_INLINE MemoryChannelDeviceHandle(MemoryDevice2DeviceSemaphoreDeviceHandle semaphore, void* dst,
                                                       void* src, void* packetBuffer)
      : BaseMemoryChannelDeviceHandle(semaphore), dst_(dst), src_(src), packetBuffer_(packetBuffer) {}

#if defined(MSCCLPP_DEVICE_COMPILE)
  /// Loads element `index` of the target viewed as an array of T.
  template <typename T>
  MSCCLPP_DEVICE_INLINE T read(uint64_t index) {
    return mscclpp::read<T>(dst_, index);
  }

  /// Stores `v` at element `index` of the target viewed as an array of T.
  template <typename T>
  MSCCLPP_DEVICE_INLINE void write(uint64_t index, const T& v) {
    mscclpp::write<T>(dst_, index, v);
  }

  /// Cooperatively copies `originBytes` from origin + originOffset to target + targetOffset (see
  /// copy() in copy_device.hpp for Alignment, CopyRemainder and the alignment preconditions).
  template <int Alignment = 16, bool CopyRemainder = true>
  MSCCLPP_DEVICE_INLINE void put(uint64_t targetOffset, uint64_t originOffset, uint64_t originBytes, uint32_t threadId,
                                 uint32_t numThreads) {
    copy<Alignment, CopyRemainder>(static_cast<char*>(dst_) + targetOffset, static_cast<char*>(src_) + originOffset,
                                   originBytes, threadId, numThreads);
  }

  template <int Alignment = 16, bool CopyRemainder = true>
  MSCCLPP_DEVICE_INLINE void put(uint64_t offset, uint64_t originBytes, uint32_t threadId, uint32_t numThreads) {
    put<Alignment, CopyRemainder>(offset, offset, originBytes, threadId, numThreads);
  }

  /// Cooperatively copies `originBytes` from target + originOffset to origin + targetOffset. The
  /// offsets are named after put()'s but apply the other way round, as in MSCCL++: `targetOffset` is
  /// where the data lands (in local memory), `originOffset` where it is read (in the peer's memory).
  template <int Alignment = 16, bool CopyRemainder = true>
  MSCCLPP_DEVICE_INLINE void get(uint64_t targetOffset, uint64_t originOffset, uint64_t originBytes, uint32_t threadId,
                                 uint32_t numThreads) {
    copy<Alignment, CopyRemainder>(static_cast<char*>(src_) + targetOffset, static_cast<char*>(dst_) + originOffset,
                                   originBytes, threadId, numThreads);
  }

  template <int Alignment = 16, bool CopyRemainder = true>
  MSCCLPP_DEVICE_INLINE void get(uint64_t offset, uint64_t originBytes, uint32_t threadId, uint32_t numThreads) {
    get<Alignment, CopyRemainder>(offset, offset, originBytes, threadId, numThreads);
  }

  /// Cooperatively sends `originBytes` from origin + originOffset as packets with `flag` to the
  /// target + targetOffset (the peer's packet buffer); see copyToPackets().
  template <typename PacketType = LL16Packet>
  MSCCLPP_DEVICE_INLINE void putPackets(uint64_t targetOffset, uint64_t originOffset, uint64_t originBytes,
                                        uint32_t threadId, uint32_t numThreads, uint32_t flag) {
    copyToPackets<PacketType>(static_cast<char*>(dst_) + targetOffset, static_cast<char*>(src_) + originOffset,
                              originBytes, threadId, numThreads, flag);
  }

  template <typename PacketType = LL16Packet>
  MSCCLPP_DEVICE_INLINE void putPackets(uint64_t offset, uint64_t originBytes, uint32_t threadId, uint32_t numThreads,
                                        uint32_t flag) {
    putPackets<PacketType>(offset, offset, originBytes, threadId, numThreads, flag);
  }

  /// Waits for packet `index` of the local packet buffer to carry `flag` and returns its payload (at
  /// most `maxSpinCount` reads; negative: no limit).
  template <typename PacketType = LL16Packet>
  MSCCLPP_DEVICE_INLINE auto unpackPacket(uint64_t index, uint32_t flag, int64_t maxSpinCount = -1) {
    MSCCLPP_ASSERT_DEVICE(packetBuffer_ != nullptr, "the channel has no packet buffer");
    return static_cast<PacketType*>(packetBuffer_)[index].read(flag, maxSpinCount);
  }

  /// Cooperatively unpacks packets with `flag` from the local packet buffer + targetOffset into
  /// origin + originOffset (`originBytes` of payload); see copyFromPackets().
  template <typename PacketType = LL16Packet>
  MSCCLPP_DEVICE_INLINE void unpackPackets(uint64_t targetOffset, uint64_t originOffset, uint64_t originBytes,
                                           uint32_t threadId, uint32_t numThreads, uint32_t flag,
                                           int64_t maxSpinCount = -1) {
    MSCCLPP_ASSERT_DEVICE(packetBuffer_ != nullptr, "the channel has no packet buffer");
    copyFromPackets<PacketType>(static_cast<char*>(src_) + originOffset,
                                static_cast<char*>(packetBuffer_) + targetOffset, originBytes, threadId, numThreads,
                                flag, maxSpinCount);
  }

  template <typename PacketType = LL16Packet>
  MSCCLPP_DEVICE_INLINE void unpackPackets(uint64_t offset, uint64_t originBytes, uint32_t threadId,
                                           uint32_t numThreads, uint32_t flag, int64_t maxSpinCount = -1) {
    unpackPackets<PacketType>(offset, offset, originBytes, threadId, numThreads, flag, maxSpinCount);
  }

  /// Former name of unpackPackets() (no spin limit).
  template <typename PacketType = LL16Packet>
  [[deprecated("use unpackPackets()")]] MSCCLPP_DEVICE_INLINE void getPackets(uint64_t targetOffset,
                                                                              uint64_t originOffset,
                                                                              uint64_t originBytes, uint32_t threadId,
                                                                              uint32_t numThreads, uint32_t flag) {
    unpackPackets<PacketType>(targetOffset, originOffset, originBytes, threadId, numThreads, flag);
  }

  template <typename PacketType = LL16Packet>
  [[deprecated("use unpackPackets()")]] MSCCLPP_DEVICE_INLINE void getPackets(uint64_t offset, uint64_t originBytes,
                                                                              uint32_t threadId, uint32_t numThreads,
                                                                              uint32_t flag) {
    unpackPackets<PacketType>(offset, offset, originBytes, threadId, numThreads, flag);
  }
#endif
};

using SmChannelDeviceHandle [[deprecated("use MemoryChannelDeviceHandle")]] = MemoryChannelDeviceHandle;

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_CHANNEL_DEVICE_HPP_
