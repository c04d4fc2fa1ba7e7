// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Publishing a 16-byte record {fst, snd} to another agent (the host proxy polling the FIFO) so that
// an observer who sees a new word also sees every write that preceded the store.
//
// MSCCLPP_ARCH_ST_RELEASE_SYS_V2_U64: defined for sm_90 and newer, where the record is written by one
// st.release.sys.global.v2.u64. Elsewhere `snd` is stored first (relaxed) and `fst` last with
// release order. Either way the two words are not written as one: a vector store is not single-copy
// atomic in the PTX memory model, so an observer may see one new word beside the other's old value.
// The consumer therefore clears both words before a slot is reused and reads a record as complete
// only when both are non-zero (Fifo::poll, Fifo::pop).

#ifndef MSCCLPP_ARCH_ST_RELEASE_SM90_HPP_
#define MSCCLPP_ARCH_ST_RELEASE_SM90_HPP_

#include <cstdint>

#include "../atomic_device.hpp"
#include "../device.hpp"

#if defined(MSCCLPP_DEVICE_CUDA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define MSCCLPP_ARCH_ST_RELEASE_SYS_V2_U64 1
#endif

#if defined(MSCCLPP_DEVICE_COMPILE)

namespace mscclpp {
namespace arch {

/// st.release.sys.global.v2.u64: stores {fst, snd} to the 16-byte aligned address `ptr` with
/// system-scope release order.
struct StReleaseSysGlobalV2U64 {
  MSCCLPP_DEVICE_INLINE static void store(uint64_t* ptr, uint64_t fst, uint64_t snd) {
#if defined(MSCCLPP_ARCH_ST_RELEASE_SYS_V2_U64)
    asm volatile("st.release.sys.global.v2.u64 [%0], {%1,%2};" ::"l"(ptr), "l"(fst), "l"(snd) : "memory");
#else
    atomicStore(ptr + 1, snd, memoryOrderRelaxed);
    atomicStore(ptr, fst, memoryOrderRelease);
#endif
  }
};

}  // namespace arch
}  // namespace mscclpp

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_ARCH_ST_RELEASE_SM90_HPP_
