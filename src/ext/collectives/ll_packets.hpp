// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What the LL kernels (ll_one_shot.cu, ll_two_shot.cu) share: the flag of an epoch, and the receipt
// of the packets every peer wrote into this rank's slots. Included by those .cu files only.

#ifndef MSCCLPP_EXT_COLLECTIVES_LL_PACKETS_HPP_
#define MSCCLPP_EXT_COLLECTIVES_LL_PACKETS_HPP_

#include "ext/collectives/device_common.hpp"

namespace mscclpp {
namespace collectives {

/// The packet flag of epoch `epoch`: never 0, the value of fresh memory.
__device__ __forceinline__ uint32_t llFlag(uint64_t epoch) { return static_cast<uint32_t>(epoch % 0xFFFFFFFEull) + 1; }

/// Ranks whose packets one thread reads before it waits for the first of them.
constexpr int kPacketGroup = 8;

/// Writes prepare(word(p)) with `flag` as packet k of the slot (`half`, block `block`) that this rank
/// fills in every peer p's scratch. The words of a group of peers are all taken before the first packet
/// is written, so that where word(p) loads from memory, the loads' latencies overlap.
template <typename Word, typename Prepare>
__device__ __forceinline__ void sendToEveryPeer(const DeviceState& s, uint32_t half, uint32_t block, uint64_t k,
                                                uint32_t flag, Word word, Prepare prepare) {
  const int n = s.nRanks, rank = s.rank;
  for (int t0 = 0; t0 < n - 1; t0 += kPacketGroup) {
    uint2 w[kPacketGroup];
#pragma unroll
    for (int j = 0; j < kPacketGroup; ++j) {
      const int t = t0 + j;
      if (t < n - 1) w[j] = word(t < rank ? t : t + 1);
    }
#pragma unroll
    for (int j = 0; j < kPacketGroup; ++j) {
      const int t = t0 + j, p = t < rank ? t : t + 1;
      if (t >= n - 1) break;
      LL16Packet* slot = reinterpret_cast<LL16Packet*>(s.scratch[p] + s.layout.llSlot(half, block, rank));
      slot[k].write(prepare(w[j]), flag);
    }
  }
}

/// words[j] = the payload of packet k of the slot (`half`, block `block`) that rank q0 + j fills in
/// this rank's scratch, once it carries `flag`, for every q0 + j < nRanks other than this rank (the
/// other entries are left alone). Every packet is read once before any is waited for: packets that
/// have already arrived, as all have for the rank that comes last, cost one memory latency together
/// instead of one each in rank order.
__device__ __forceinline__ void receivePackets(const DeviceState& s, uint32_t half, uint32_t block, int q0, uint64_t k,
                                               uint32_t flag, uint2 (&words)[kPacketGroup]) {
  auto packet = [&](int q) {
    return reinterpret_cast<const LL16Packet*>(s.scratch[s.rank] + s.layout.llSlot(half, block, q)) + k;
  };
  bool pending[kPacketGroup];
#pragma unroll
  for (int j = 0; j < kPacketGroup; ++j) {
    const int q = q0 + j;
    pending[j] = q < s.nRanks && q != s.rank && packet(q)->readOnce(flag, words[j]);
  }
#pragma unroll
  for (int j = 0; j < kPacketGroup; ++j) {
    if (pending[j]) words[j] = packet(q0 + j)->read(flag, kSpinLimit);
  }
}

/// Calls f(q, word) for every rank q in rank order: `mine` for this rank, otherwise the payload of q's
/// packet k (receivePackets).
template <typename F>
__device__ __forceinline__ void forEachRankWord(const DeviceState& s, uint32_t half, uint32_t block, uint64_t k,
                                                uint32_t flag, uint2 mine, F&& f) {
  for (int q0 = 0; q0 < s.nRanks; q0 += kPacketGroup) {
    uint2 words[kPacketGroup];
    receivePackets(s, half, block, q0, k, flag, words);
#pragma unroll
    for (int j = 0; j < kPacketGroup; ++j) {
      const int q = q0 + j;
      if (q >= s.nRanks) break;
      f(q, q == s.rank ? mine : words[j]);
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
