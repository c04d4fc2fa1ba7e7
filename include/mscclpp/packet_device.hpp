// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Low-latency (LL) packets: data and a flag written together, so that a reader needs no separate
// signal to know the data has arrived.
//
// Protocol. The writer stores each payload with a flag value chosen for this round (an "epoch"); the
// reader spins on the packet until it carries that flag, then takes the payload. No fence and no
// semaphore is involved: the flag and the data it guards are written by one store that the hardware
// performs as a unit (8 bytes), so seeing the flag implies seeing the data.
// - Flags are epochs: a buffer is reused for the next round by writing it with a different flag; it
//   is never cleared. A reader of epoch e sees packets of other epochs as "not ready".
// - So a flag must differ from anything the buffer may still hold: start at 1 on a zeroed buffer and
//   change the flag every round. Before rewriting a packet the writer must know the reader has taken
//   the previous epoch (e.g. a semaphore, or alternating between two buffers).
// - readOnce() returns true while the packet is NOT ready (the flag differs), false when `data` holds
//   the payload of epoch `flag`.
//
// LL16Packet carries 8 bytes of data in 16 (two 8-byte halves, each with a copy of the flag);
// LL8Packet carries 4 bytes in 8.

#ifndef MSCCLPP_PACKET_DEVICE_HPP_
#define MSCCLPP_PACKET_DEVICE_HPP_

#include <cstdint>
#include <type_traits>

#include "device.hpp"
#include "gpu.hpp"

#if defined(MSCCLPP_DEVICE_COMPILE)
#include "arch/ld_st_volatile.hpp"
#include "atomic_device.hpp"
#include "poll_device.hpp"
#endif

namespace mscclpp {

/// 8 bytes of data with the flag repeated in each 8-byte half (16 bytes, 16-byte aligned).
union alignas(16) LL16Packet {
  struct {
    uint32_t data1;
    uint32_t flag1;
    uint32_t data2;
    uint32_t flag2;
  };
  using Payload = uint2;

#if defined(MSCCLPP_DEVICE_COMPILE)
  ulonglong2 raw_;

  LL16Packet() = default;

  MSCCLPP_DEVICE_INLINE LL16Packet(uint2 val, uint32_t flag) : data1(val.x), flag1(flag), data2(val.y), flag2(flag) {}

  /// Writes {val1, val2} with `flag` in one 16-byte store.
  MSCCLPP_DEVICE_INLINE void write(uint32_t val1, uint32_t val2, uint32_t flag) {
    arch::StVolatileGlobalV4U32::store(&raw_, val1, flag, val2, flag);
  }

  /// Writes the low then the high 32 bits of `val` with `flag`.
  MSCCLPP_DEVICE_INLINE void write(uint64_t val, uint32_t flag) {
    write(static_cast<uint32_t>(val), static_cast<uint32_t>(val >> 32), flag);
  }

  MSCCLPP_DEVICE_INLINE void write(uint2 val, uint32_t flag) { write(val.x, val.y, flag); }

  /// Reads the packet once. Returns true while it is NOT ready (a flag differs from `flag`); returns
  /// false with the payload in `data` once both halves carry `flag`.
  MSCCLPP_DEVICE_INLINE bool readOnce(uint32_t flag, uint2& data) const {
    uint32_t f1, f2;
    arch::LdVolatileGlobalV4U32::load(&raw_, data.x, f1, data.y, f2);
    return (f1 != flag) || (f2 != flag);
  }

  /// Waits until the packet carries `flag` and returns its payload; at most `maxSpinCount` reads
  /// (negative: no limit).
  MSCCLPP_DEVICE_INLINE uint2 read(uint32_t flag,
                                   int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(100000000)) const {
    uint2 data;
    POLL_MAYBE_JAILBREAK(readOnce(flag, data), maxSpinCount)
    return data;
  }

  /// Zeroes the packet (a zero flag never matches a flag the protocol uses).
  MSCCLPP_DEVICE_INLINE void clear() { raw_ = make_ulonglong2(0, 0); }
#endif
};

/// 4 bytes of data and a flag in one 8-byte word (8-byte aligned).
union alignas(8) LL8Packet {
  struct {
    uint32_t data;
    uint32_t flag;
  };
  uint64_t raw_;
  using Payload = uint32_t;

#if defined(MSCCLPP_DEVICE_COMPILE)
  LL8Packet() = default;

  MSCCLPP_DEVICE_INLINE LL8Packet(uint32_t val, uint32_t flag) : data(val), flag(flag) {}

  /// Writes `val` with `flag` in one 8-byte store.
  MSCCLPP_DEVICE_INLINE void write(uint32_t val, uint32_t flag) {
    atomicStore<uint64_t, scopeSystem>(&raw_, (static_cast<uint64_t>(flag) << 32) | val, memoryOrderRelaxed);
  }

  /// Reads the packet once. Returns true while it is NOT ready; false with the payload in `data` once
  /// it carries `flag`.
  MSCCLPP_DEVICE_INLINE bool readOnce(uint32_t flag, uint32_t& data) const {
    const uint64_t word = atomicLoad<uint64_t, scopeSystem>(&raw_, memoryOrderRelaxed);
    data = static_cast<uint32_t>(word);
    return static_cast<uint32_t>(word >> 32) != flag;
  }

  /// Waits until the packet carries `flag` and returns its payload; at most `maxSpinCount` reads
  /// (negative: no limit).
  MSCCLPP_DEVICE_INLINE uint32_t read(uint32_t flag,
                                      int64_t maxSpinCount = MSCCLPP_DEFAULT_MAX_SPIN_COUNT(1000000)) const {
    uint32_t data;
    POLL_MAYBE_JAILBREAK(readOnce(flag, data), maxSpinCount)
    return data;
  }

  MSCCLPP_DEVICE_INLINE void clear() { raw_ = 0; }
#endif
};

using LLPacket = LL16Packet;

}  // namespace mscclpp

#endif  // MSCCLPP_PACKET_DEVICE_HPP_
