// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Cooperative copies for device code: a group of `numThreads` threads (a block, a warp, several
// blocks) calls the same function with its own `threadId` in [0, numThreads), and together they copy
// the whole range. The copies make no ordering promise; use a barrier, semaphore or packets to tell
// another agent that they are done.

#ifndef MSCCLPP_COPY_DEVICE_HPP_
#define MSCCLPP_COPY_DEVICE_HPP_

#include <cstdint>
#include <type_traits>

#include "device.hpp"
#include "packet_device.hpp"

#if defined(MSCCLPP_DEVICE_COMPILE)

namespace mscclpp {

namespace detail {
/// Copies `numElems` elements of T; element i is copied by thread i % numThreads.
template <typename T>
MSCCLPP_DEVICE_INLINE void copy(T* dst, T* src, uint64_t numElems, uint32_t threadId, uint32_t numThreads);
}  // namespace detail

/// Copies `bytes` from src to dst, moving the middle of the range as T (a 4-, 8- or 16-byte type) and
/// the ints before the first T-aligned address of dst and after the last whole T ("head" and "tail")
/// as int, if CopyRemainder. Without CopyRemainder head and tail are left untouched.
/// Preconditions: dst and src are 4-byte aligned and misaligned by the same amount modulo sizeof(T);
/// `bytes` is a multiple of 4 (a remainder below 4 bytes is not copied).
template <typename T, bool CopyRemainder = true>
MSCCLPP_DEVICE_INLINE void copyHelper(void* dst, void* src, uint64_t bytes, uint32_t threadId, uint32_t numThreads);

/// Copies `bytes` from src to dst with elements of `Alignment` bytes: int, long long or longlong2 for
/// 4, 8 or 16. Larger elements are faster. The preconditions of copyHelper apply with T of that size:
/// dst and src need not be Alignment-aligned, but their misalignment must be equal and a multiple of 4.
template <int Alignment = 16, bool CopyRemainder = true>
MSCCLPP_DEVICE_INLINE void copy(void* dst, void* src, uint64_t bytes, uint32_t threadId, uint32_t numThreads);

/// Stores `v` at element `index` of the T array at dst.
template <typename T>
MSCCLPP_DEVICE_INLINE void write(void* dst, uint64_t index, const T& v) {
  reinterpret_cast<T*>(dst)[index] = v;
}

/// Loads element `index` of the T array at src.
template <typename T>
MSCCLPP_DEVICE_INLINE T read(void* src, uint64_t index) {
  return reinterpret_cast<T*>(src)[index];
}

/// Packs `originBytes` of data at originPtr into packets at targetPtr, all with `flag`: 8 bytes per
/// LL16Packet, 4 bytes per LL8Packet (packet i holds origin bytes [i*P, (i+1)*P)). originPtr is 4-byte
/// aligned, targetPtr aligned to the packet; a remainder below one payload is not sent.
template <typename PacketType = LL16Packet>
MSCCLPP_DEVICE_INLINE void copyToPackets(void* targetPtr, const void* originPtr, uint64_t originBytes,
                                         uint32_t threadId, uint32_t numThreads, uint32_t flag);

/// Unpacks the packets at targetPtr into `originBytes` of data at originPtr, waiting for each packet to
/// carry `flag` (at most `maxSpinCount` reads per packet; negative: no limit). The inverse of
/// copyToPackets; originPtr is 8-byte aligned for LL16Packet, 4-byte aligned for LL8Packet.
template <typename PacketType = LL16Packet>
MSCCLPP_DEVICE_INLINE void copyFromPackets(void* originPtr, const void* targetPtr, uint64_t originBytes,
                                           uint32_t threadId, uint32_t numThreads, uint32_t flag,
                                           int64_t maxSpinCount = -1);

}  // namespace mscclpp

#include "impl/copy_device_impl.hpp"

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_COPY_DEVICE_HPP_
