// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Where things are in a rank's scratch buffer, which its peers map and write into:
//   [barrier flags][LL packets, two halves][staged data, two halves]
// - flags[b][src]: the barrier count rank `src`'s block b last reached with this rank (8 bytes each).
// - LL half h, block b, slot src: the packets rank src's block b sends here in an LL call whose
//   epoch has parity h. Two halves so that a writer never overwrites packets the reader may not have
//   read yet (ll_one_shot.cu says why one call of distance is enough).
// - staged half h, block b, slot src: the data rank src's block b writes here between the barriers
//   number c and c+1 of that pair, with h = c % 2 (staged.cu says why).
// One slot belongs to one (block, source) pair, so nothing is shared between blocks or between
// senders, and no slot ever needs clearing: every reader knows the epoch or count it waits for.

#ifndef MSCCLPP_EXT_COLLECTIVES_LAYOUT_HPP_
#define MSCCLPP_EXT_COLLECTIVES_LAYOUT_HPP_

#include <cstdint>
#include <mscclpp/device.hpp>

#include "ext/collectives/tiling.hpp"

namespace mscclpp {
namespace collectives {

/// Ranks one object supports: the peers' scratch addresses travel in every kernel's parameters.
constexpr int kMaxRanks = 64;
/// Threads per block of every collective kernel.
constexpr int kBlockThreads = 512;
/// LL one-shot aims at this many packets per block before it adds blocks: a packet per peer for half
/// of a block's threads, so that a 16 KiB segment already spreads over 8 blocks (at 2 packets per
/// thread it took 2, and a thread's packets to its peers waited on one another).
constexpr uint64_t kLLPacketsPerBlock = kBlockThreads / 2;
/// Staged paths aim at this many bytes per block before they add blocks.
constexpr uint64_t kStagedBytesPerBlock = 32 << 10;
/// Largest all-reduce the LL two-shot path takes under Auto; the LL slots are sized to hold it. At
/// 1 MiB two-shot beat staged at 3 and 4 ranks (10.7 us against 14.1 and 15.0); at 2 MiB it lost at
/// every rank count (4 ranks: 31.3 against 17.3; H100, 2026-12-07).
constexpr uint64_t kLLTwoShotMaxBytes = 1 << 20;
/// Zero-copy paths aim at this many bytes of a rank's part per block before they add blocks (half a
/// block's threads get one 16-byte word): spreading a small chunk over more SMs overlaps more of its
/// loads from the peers. At 16 KiB a 4-rank zero-copy all-reduce took 6.03 us at 256 KiB and 5.69 at
/// 64 KiB, at 4 KiB 5.09 and 4.89; the all-gather was 6-9 % faster at 64-256 KiB and within 1 % from
/// 1 MiB on, as was every size where maxBlocks caps the count (H100, 2026-12-07). At 64 KiB a 1 MiB
/// all-gather part at 4 ranks ran on 4 blocks, each writing 4 peers one after another.
constexpr uint64_t kZeroCopyBytesPerBlock = 4 << 10;
/// From this part size up, the zero-copy all-gather stores with the evict-first hint: nothing it stores
/// is read again by the call, and the outputs (n parts on every rank) crowd its inputs out of the L2
/// (50 MB on an H100, shared by every rank on the GPU). Messages (not parts) below; against plain
/// stores, same run (H100, 2026-12-07): 4 ranks 16 MiB 28.84 -> 26.92 us in place and 34.87 -> 32.77
/// out of place, 64 MiB 103.03 -> 101.45 and 126.98 -> 126.19; 2 ranks 16 MiB 9.58 -> 8.89 and 20.05 ->
/// 15.03, 64 MiB 51.96 -> 50.77 and 77.25 -> 75.50; unchanged at 4 MiB, where parts are 1-2 MiB.
constexpr uint64_t kZeroCopyEvictFirstMinBytes = 4 << 20;

struct ScratchLayout {
  int nRanks = 0;
  uint32_t maxBlocks = 0;
  uint64_t llSlotPackets = 0;  // packets one LL slot holds
  uint64_t stagedSlotBytes = 0;
  uint64_t flagsOffset = 0;
  uint64_t llOffset = 0;
  uint64_t stagedOffset = 0;
  uint64_t totalBytes = 0;

  MSCCLPP_HOST_DEVICE_INLINE uint64_t flag(uint32_t block, int src) const {
    return flagsOffset + (static_cast<uint64_t>(block) * nRanks + src) * sizeof(uint64_t);
  }
  MSCCLPP_HOST_DEVICE_INLINE uint64_t llSlot(uint32_t half, uint32_t block, int src) const {
    return llOffset + ((static_cast<uint64_t>(half) * maxBlocks + block) * nRanks + src) * llSlotPackets * 16;
  }
  MSCCLPP_HOST_DEVICE_INLINE uint64_t stagedSlot(uint32_t half, uint32_t block, int src) const {
    return stagedOffset + ((static_cast<uint64_t>(half) * maxBlocks + block) * nRanks + src) * stagedSlotBytes;
  }
};

/// The layout for `nRanks` ranks, `maxBlocks` blocks per launch, LL one-shot segments of up to
/// `llMaxBytes`, LL two-shot all-reduces of up to kLLTwoShotMaxBytes, and about `stagedBytes` of
/// staged data.
inline ScratchLayout makeScratchLayout(int nRanks, uint32_t maxBlocks, uint64_t llMaxBytes, uint64_t stagedBytes) {
  ScratchLayout l;
  l.nRanks = nRanks;
  l.maxBlocks = maxBlocks;
  uint64_t perBlock = ceilDiv(ceilDiv(llMaxBytes, 8), maxBlocks);
  const uint64_t twoShotPerBlock = twoShotTiling(kLLTwoShotMaxBytes, nRanks, maxBlocks).packetsPerBlock;
  if (perBlock < twoShotPerBlock) perBlock = twoShotPerBlock;
  l.llSlotPackets = roundUp(perBlock > kLLPacketsPerBlock ? perBlock : kLLPacketsPerBlock, 16);
  const uint64_t slots = 2ull * maxBlocks * nRanks;
  l.stagedSlotBytes = (stagedBytes / slots) / 256 * 256;
  if (l.stagedSlotBytes < 4096) l.stagedSlotBytes = 4096;
  l.flagsOffset = 0;
  l.llOffset = roundUp(static_cast<uint64_t>(maxBlocks) * nRanks * sizeof(uint64_t), 4096);
  l.stagedOffset = l.llOffset + slots * l.llSlotPackets * 16;
  l.totalBytes = l.stagedOffset + slots * l.stagedSlotBytes;
  return l;
}

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_LAYOUT_HPP_
