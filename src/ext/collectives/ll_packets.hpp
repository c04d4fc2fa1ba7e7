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

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_LL_PACKETS_HPP_
