// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Pairwise transfers through scratch: the data movement of all-gather, all-to-all(-v), broadcast,
// gather, scatter and send/recv (groups of them) above the LL sizes, and all of it for the
// collectives without an LL variant. Each peer of a launch gets the same number of blocks, a number
// that depends on the rank count only; block j of the pair (this rank, p) writes its tile into p's
// scratch slot (j, this rank), meets block j of p at a barrier of the two, and copies the tile p
// wrote into this rank's slot (j, p) out. The tile sizes follow from the larger of the two
// directions' byte counts, which both ranks know, so both walk the same rounds.
//
// A pair's barriers involve only the two ranks, so transfers with different peers progress
// independently and no order of sends and receives in a group can deadlock; the halves of the
// slots follow the pair's barrier count as in staged.cu.

#include <algorithm>

#include "ext/collectives/device_common.hpp"
#include "ext/collectives/tiling.hpp"

namespace mscclpp {
namespace collectives {

namespace {

__global__ void __launch_bounds__(kBlockThreads) pairwiseKernel(DeviceState s, PairPlan plan, uint32_t blocksPerPeer) {
  waitForPriorKernels();
  const int g = static_cast<int>(blockIdx.x / blocksPerPeer);
  const uint32_t j = blockIdx.x % blocksPerPeer;
  const int first = plan.groupBegin[g], last = plan.groupBegin[g + 1];
  const int peer = plan.entries[first].peer;
  const int rank = s.rank;
  // Only this pair's count: blocks of other groups share block index j and own the other counts.
  __shared__ BlockCounts counts;
  if (threadIdx.x == 0) counts.count[peer] = s.barrierCounts[j * s.nRanks + peer];
  __syncthreads();
  for (int e = first; e < last; ++e) {
    const PairEntry& entry = plan.entries[e];
    const uint64_t bytes = entry.sendBytes > entry.recvBytes ? entry.sendBytes : entry.recvBytes;
    const Tiling tiling = makeTiling(bytes, 1, blocksPerPeer, s.layout.stagedSlotBytes, kStagedBytesPerBlock);
    if (j >= tiling.nBlocks) continue;
    for (uint64_t k = 0; k < tiling.rounds; ++k) {
      const uint64_t tb = tiling.tileBegin(j, k), te = tiling.tileEnd(j, k);
      if (tb < entry.sendBytes) {
        const uint64_t end = te < entry.sendBytes ? te : entry.sendBytes;
        copyBytes(s.scratch[peer] + s.layout.stagedSlot(counts.count[peer] & 1, j, rank), entry.send + tb, end - tb);
      }
      barrier(s, j, counts, 1, OnePeer{peer});
      if (tb < entry.recvBytes) {
        const uint64_t end = te < entry.recvBytes ? te : entry.recvBytes;
        copyBytes(entry.recv + tb, s.scratch[rank] + s.layout.stagedSlot((counts.count[peer] - 1) & 1, j, peer),
                  end - tb);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) s.barrierCounts[j * s.nRanks + peer] = counts.count[peer];
}

}  // namespace

bool collectiveKernelsLaunchDependent() {
  // Every collective kernel is built for the same architectures; one stands for all.
  return ext::launchesDependent(reinterpret_cast<const void*>(&pairwiseKernel));
}

uint32_t pairBlocksPerPeer(const DeviceState& s) {
  const uint32_t peers = s.nRanks > 1 ? static_cast<uint32_t>(s.nRanks - 1) : 1;
  const uint32_t blocks = s.layout.maxBlocks / peers;
  return blocks > 0 ? blocks : 1;
}

void launchPairwise(const DeviceState& s, PairPlan plan, cudaStream_t stream) {
  if (plan.nEntries == 0) return;
  // Group by peer, keeping each peer's entries in their order (that order pairs them).
  std::stable_sort(plan.entries, plan.entries + plan.nEntries,
                   [](const PairEntry& a, const PairEntry& b) { return a.peer < b.peer; });
  plan.nGroups = 0;
  for (int e = 0; e < plan.nEntries; ++e) {
    if (e == 0 || plan.entries[e].peer != plan.entries[e - 1].peer) plan.groupBegin[plan.nGroups++] = e;
  }
  plan.groupBegin[plan.nGroups] = plan.nEntries;
  const uint32_t bpp = pairBlocksPerPeer(s);
  launchKernel(pairwiseKernel, dim3(plan.nGroups * bpp), dim3(kBlockThreads), 0, stream, s.dependentLaunch, s, plan,
               bpp);
}

}  // namespace collectives
}  // namespace mscclpp
