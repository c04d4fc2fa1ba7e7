// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/collectives/selection.hpp"

#include <algorithm>
#include <string>

#include "common/checks.hpp"
#include "ext/collectives/tuning.hpp"

namespace mscclpp {
namespace collectives {

Config resolveConfig(const Config& config, int ranksPerGpu, const Env& env) {
  Config c = config;
  if (c.scratchBytes == 0) c.scratchBytes = env.collScratchBytes;
  if (c.maxBlocks == 0) c.maxBlocks = static_cast<int>(env.collMaxBlocks);
  if (c.maxBlocks == 0) {
    const int share = kResidentBlocksPerGpu / (ranksPerGpu > 0 ? ranksPerGpu : 1);
    c.maxBlocks = std::max(1, std::min(share, kMaxBlocksPerLaunch));
  }
  MSCCLPP_CHECK_USAGE(c.maxBlocks >= 1 && c.maxBlocks <= 1024, "maxBlocks must be in [1, 1024], got ", c.maxBlocks);
  if (c.llMaxBytes == 0) c.llMaxBytes = env.collLLMaxBytes;
  // Env accepts only the names algorithmFromName knows; anything else left the default, "auto".
  if (c.forceAlgorithm == Algorithm::Auto) algorithmFromName(env.collAlgo, c.forceAlgorithm);
  if (c.tuningFile.empty()) c.tuningFile = env.collTuningFile;
  return c;
}

Variants variantsOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
      return {true, true, false};
    case Collective::AllGather:
      return {true, true, true};
    case Collective::AllToAll:
      return {true, false, true};
    case Collective::Broadcast:
      return {false, false, true};
    case Collective::Reduce:
    case Collective::AllToAllv:
    case Collective::Gather:
    case Collective::Scatter:
    case Collective::SendRecv:
      return {false, false, false};
  }
  return {false, false, false};
}

namespace {

/// Where Auto leaves scratch for registered buffers: from `fromBytes` (the segment, as selectAlgorithm
/// takes it: the whole message of an all-reduce or broadcast, one rank's part of an all-gather or
/// reduce-scatter) up, at `minRanks` to `maxRanks` ranks (0: no upper bound), `algorithm`. The first
/// matching row wins. Measured with mscclpp-coll-bench, 2, 3 and 4 ranks on one GPU under MPS, CUDA
/// graphs, every algorithm forced in turn (docs/performance.md, 2026-12-04 on an H200, 2026-12-06 and
/// 2026-12-07 on an H100): below these sizes the LL and staged paths were faster.
struct RegisteredBand {
  Collective collective;
  size_t fromBytes;
  int minRanks;
  int maxRanks;
  Algorithm algorithm;
};

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

constexpr RegisteredBand kRegisteredBands[] = {
    // One pass over the peers' inputs, no scratch. From 256 KiB at 4 ranks or more (5.1 us against 5.9
    // by LL one-shot, with kZeroCopyBytesPerBlock's 4 KiB blocks), from 512 KiB at 3 (5.7 us against
    // 7.4 by one-shot), from 1 MiB at 2 (4.5 against 5.6).
    {Collective::AllReduce, 256 * kKiB, 4, 0, Algorithm::ZeroCopy},
    {Collective::AllReduce, 512 * kKiB, 3, 0, Algorithm::ZeroCopy},
    {Collective::AllReduce, kMiB, 2, 0, Algorithm::ZeroCopy},
    // 2 and 4 MiB parts: 9.6 and 14.8 us against 12.2 and 27.6 through scratch.
    {Collective::ReduceScatter, kMiB, 2, 0, Algorithm::ZeroCopy},
    // The copy engines from 16 MiB parts at 2 ranks only (64 MiB gathers in place: 51.3 us against
    // 53.1 by SM). At 4 ranks twelve copies share the engines and the SM copy into the peers' outputs
    // wins at every size (64 MiB in place: 107.9 us against 144.4; 16 MiB: 31.4 against 39.6).
    {Collective::AllGather, 16 * kMiB, 2, 2, Algorithm::CopyEngine},
    // SM copies into the peers' outputs from 256 KiB parts at 3 ranks or more (4 ranks: 5.1 us against
    // 6.0 by LL one-shot; 3 ranks, 341 KiB parts: 5.6 against 6.5; at 128 KiB parts one-shot wins,
    // 4.0 against 5.2), from 1 MiB parts at 2 ranks (512 KiB parts: one-shot 3.3 against 3.7).
    {Collective::AllGather, 256 * kKiB, 3, 0, Algorithm::ZeroCopy},
    {Collective::AllGather, kMiB, 2, 0, Algorithm::ZeroCopy},
    // 8 MiB: 8.5 us against 8.6 at 2 ranks, 20.1 against 38.9 at 4; 1 MiB: slower than staged.
    {Collective::Broadcast, 8 * kMiB, 2, 0, Algorithm::CopyEngine},
    // Not yet timed itself: at 64 MiB and 4 ranks (16 MiB parts) the pairwise SM copies through scratch
    // took 1.69x the copy floor, where the copy engines took broadcast to 0.87x.
    {Collective::AllToAll, 16 * kMiB, 2, 0, Algorithm::CopyEngine},
};

/// Auto's choice for registered buffers, or Auto where no band covers the call.
Algorithm registeredBand(Collective collective, size_t segBytes, int nRanks) {
  for (const RegisteredBand& band : kRegisteredBands) {
    if (band.collective == collective && segBytes >= band.fromBytes && nRanks >= band.minRanks &&
        (band.maxRanks == 0 || nRanks <= band.maxRanks))
      return band.algorithm;
  }
  return Algorithm::Auto;
}

}  // namespace

Algorithm selectAlgorithm(Collective collective, size_t segBytes, int nRanks, const Config& config,
                          const ScratchLayout& layout, bool registered, const TuningTable* tuning, uint32_t* blocks) {
  if (blocks) *blocks = 0;
  if (nRanks < 2) return Algorithm::Staged;
  const Variants variants = variantsOf(collective);
  const bool zeroCopy = registered && variants.zeroCopy;
  const bool copyEngine = registered && variants.copyEngine;
  const PacketTiling tiling = makePacketTiling(segBytes, layout.maxBlocks, kLLPacketsPerBlock);
  const bool llFits = variants.llOneShot && tiling.packetsPerBlock <= layout.llSlotPackets;
  const bool twoShotFits = collective == Collective::AllReduce &&
                           twoShotTiling(segBytes, nRanks, layout.maxBlocks).packetsPerBlock <= layout.llSlotPackets;
  Algorithm wanted = Algorithm::Auto;
  if (config.selector) wanted = config.selector(collective, segBytes, nRanks);
  if (wanted == Algorithm::Auto) wanted = config.forceAlgorithm;
  uint32_t tunedBlocks = 0;
  if (wanted == Algorithm::Auto && tuning) {
    if (const TuningRule* rule = tuning->find(collective, segBytes, nRanks, registered)) {
      wanted = rule->algorithm;
      tunedBlocks = rule->blocks;
    }
  }
  if (wanted == Algorithm::Auto && registered) wanted = registeredBand(collective, segBytes, nRanks);
  if (wanted == Algorithm::Auto) {
    // One-shot sends the whole segment to every peer as packets of twice its size, so its traffic
    // grows with the peer count: it wins while that traffic costs less than two barrier hops. The
    // default 768 KiB: every size this bound moved from 512 KiB ran faster one-shot (all-reduce 640
    // KiB at 2 ranks 4.3 us against 5.2 two-shot, 256-384 KiB at 3 ranks 4.7 against 5.1; all-gather
    // 256 KiB parts at 4 ranks 6.0 against 8.8 zero-copy; docs/performance.md, 2026-12-06).
    const bool small = segBytes * static_cast<size_t>(nRanks - 1) <= config.llMaxBytes;
    if (small && variants.llOneShot) {
      wanted = Algorithm::LLOneShot;
    } else if (twoShotFits && segBytes <= kLLTwoShotMaxBytes) {
      // Two-shot sends each byte twice as packets, whatever the rank count, and needs no barrier.
      wanted = Algorithm::LLTwoShot;
    } else {
      wanted = Algorithm::Staged;
    }
  }
  if (wanted == Algorithm::LLOneShot && !llFits) return Algorithm::Staged;
  if (wanted == Algorithm::ZeroCopy && !zeroCopy) return Algorithm::Staged;
  if (wanted == Algorithm::LLTwoShot && !twoShotFits) return Algorithm::Staged;
  if (wanted == Algorithm::CopyEngine && !copyEngine) return Algorithm::Staged;
  if (blocks && wanted == Algorithm::ZeroCopy) *blocks = tunedBlocks;
  return wanted;
}

}  // namespace collectives
}  // namespace mscclpp
