// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What the LL kernels (ll_one_shot.cu, ll_two_shot.cu) share: the flag of an epoch, the sending of a
// packet to every peer, and the receipt of the packets every peer wrote into this rank's slots.
// Included by those .cu files only.

#ifndef MSCCLPP_EXT_COLLECTIVES_LL_PACKETS_HPP_
#define MSCCLPP_EXT_COLLECTIVES_LL_PACKETS_HPP_

#include "ext/collectives/device_common.hpp"

namespace mscclpp {
namespace collectives {

/// The packet flag of epoch `epoch`: never 0, the value of fresh memory.
__device__ __forceinline__ uint32_t llFlag(uint64_t epoch) { return static_cast<uint32_t>(epoch % 0xFFFFFFFEull) + 1; }

// The helpers below visit the peers one after another, each spinning on its own packet, and keep
// nothing in arrays. Issuing every peer's packet read before waiting for any, and loading a group of
// peers' words before writing the first packet (up to 8 words per thread in flight), were measured
// slower than this on one H100, ranks under MPS, CUDA graphs (docs/performance.md, 2026-12-06, "The
// LL kernels' grouped reads undone"): one-shot calls took 0.1-1.4 us more at 2 and 4 ranks, two-shot
// all-reduces 3.6-4.1 us more (1 MiB at 2 ranks: 10.36 us against 6.28).

/// Writes prepare(word(p)) with `flag` as packet k of the slot (`half`, block `block`) that this rank
/// fills in every peer p's scratch, peers in rank order.
template <typename Word, typename Prepare>
__device__ __forceinline__ void sendToEveryPeer(const DeviceState& s, uint32_t half, uint32_t block, uint64_t k,
                                                uint32_t flag, Word word, Prepare prepare) {
  const int n = s.nRanks, rank = s.rank;
  for (int t = 0; t < n - 1; ++t) {
    const int p = t < rank ? t : t + 1;
    LL16Packet* slot = reinterpret_cast<LL16Packet*>(s.scratch[p] + s.layout.llSlot(half, block, rank));
    slot[k].write(prepare(word(p)), flag);
  }
}

/// Calls f(q, word) for every rank q in rank order: `mine` for this rank, otherwise the payload of packet
/// k of the slot (`half`, block `block`) that rank q fills in this rank's scratch, once it carries `flag`.
template <typename F>
__device__ __forceinline__ void forEachRankWord(const DeviceState& s, uint32_t half, uint32_t block, uint64_t k,
                                                uint32_t flag, uint2 mine, F&& f) {
  for (int q = 0; q < s.nRanks; ++q) {
    if (q == s.rank) {
      f(q, mine);
    } else {
      const LL16Packet* slot = reinterpret_cast<const LL16Packet*>(s.scratch[s.rank] + s.layout.llSlot(half, block, q));
      f(q, slot[k].read(flag, kSpinLimit));
    }
  }
}

/// The reduction in rank order of this rank's word `mine` and every peer's payload of packet k: the
/// same order on every rank, so every rank that reduces the same words gets the same bits.
template <typename T, ReduceSpec::Kind Kind>
__device__ __forceinline__ uint2 reduceWithPeerPackets(const DeviceState& s, const Reducer<T, Kind>& r, uint32_t half,
                                                       uint32_t block, uint64_t k, uint32_t flag, uint2 mine) {
  VecAcc<T, Kind, 8> acc;
  forEachRankWord(s, half, block, k, flag, mine, [&](int q, uint2 word) {
    Vec<T, 8> v;
    v.raw = word;
    if (q == 0) {
      acc.begin(r, v);
    } else {
      acc.add(r, v);
    }
  });
  return acc.end(r).raw;
}

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_LL_PACKETS_HPP_
