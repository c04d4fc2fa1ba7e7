// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// 16-byte volatile global load and store: the access the LL16 packet protocol is built on. A packet
// is two 8-byte halves, each carrying its own copy of the flag; the protocol needs each half to be
// written and read as a unit, and one 16-byte access does both halves in a single instruction.
//
// MSCCLPP_ARCH_VOLATILE_V4_U32: defined where the PTX form (ld/st.volatile.global.v4.u32) is used,
// i.e. under nvcc (every CUDA architecture has it). Elsewhere (HIP) each 8-byte half is moved
// separately, which the protocol tolerates because the halves are checked independently.

#ifndef MSCCLPP_ARCH_LD_ST_VOLATILE_HPP_
#define MSCCLPP_ARCH_LD_ST_VOLATILE_HPP_

#include <cstdint>

#include "../atomic_device.hpp"
#include "../device.hpp"

#if defined(MSCCLPP_DEVICE_CUDA)
#define MSCCLPP_ARCH_VOLATILE_V4_U32 1
#endif

#if defined(MSCCLPP_DEVICE_COMPILE)

namespace mscclpp {
namespace arch {

/// st.volatile.global.v4.u32: stores {a, b, c, d} to the 16-byte aligned global address `ptr`.
struct StVolatileGlobalV4U32 {
  MSCCLPP_DEVICE_INLINE static void store(void* ptr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
#if defined(MSCCLPP_ARCH_VOLATILE_V4_U32)
    asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(ptr), "r"(a), "r"(b), "r"(c), "r"(d)
                 : "memory");
#else
    uint64_t* words = reinterpret_cast<uint64_t*>(ptr);
    __builtin_nontemporal_store((static_cast<uint64_t>(b) << 32) | a, words);
    __builtin_nontemporal_store((static_cast<uint64_t>(d) << 32) | c, words + 1);
#endif
  }
};

/// ld.volatile.global.v4.u32: loads the 16-byte aligned global address `ptr` into {a, b, c, d}.
struct LdVolatileGlobalV4U32 {
  MSCCLPP_DEVICE_INLINE static void load(const void* ptr, uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d) {
#if defined(MSCCLPP_ARCH_VOLATILE_V4_U32)
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "l"(ptr)
                 : "memory");
#else
    const uint64_t* words = reinterpret_cast<const uint64_t*>(ptr);
    uint64_t lo = atomicLoad(words, memoryOrderRelaxed);
    uint64_t hi = atomicLoad(words + 1, memoryOrderRelaxed);
    a = static_cast<uint32_t>(lo);
    b = static_cast<uint32_t>(lo >> 32);
    c = static_cast<uint32_t>(hi);
    d = static_cast<uint32_t>(hi >> 32);
#endif
  }
};

}  // namespace arch
}  // namespace mscclpp

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_ARCH_LD_ST_VOLATILE_HPP_
