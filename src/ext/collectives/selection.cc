// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/collectives/selection.hpp"

#include <algorithm>
#include <string>

#include "common/checks.hpp"

namespace mscclpp {
namespace collectives {

namespace {

/// Env::collAlgo, one of the values Env accepts.
Algorithm algorithmNamed(const std::string& name) {
  if (name == "ll") return Algorithm::LLOneShot;
  if (name == "staged") return Algorithm::Staged;
  if (name == "zerocopy") return Algorithm::ZeroCopy;
  if (name == "ll2") return Algorithm::LLTwoShot;
  if (name == "ce") return Algorithm::CopyEngine;
  return Algorithm::Auto;
}

}  // namespace

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
  if (c.forceAlgorithm == Algorithm::Auto) c.forceAlgorithm = algorithmNamed(env.collAlgo);
  return c;
}

bool hasLLOneShot(Collective collective) {
  switch (collective) {
    case Collective::AllReduce:
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
      return true;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::AllToAllv:
    case Collective::Gather:
    case Collective::Scatter:
    case Collective::SendRecv:
      return false;
  }
  return false;
}

bool hasZeroCopy(Collective collective) {
  switch (collective) {
    case Collective::AllReduce:
    case Collective::AllGather:
    case Collective::ReduceScatter:
      return true;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::AllToAll:
    case Collective::AllToAllv:
    case Collective::Gather:
    case Collective::Scatter:
    case Collective::SendRecv:
      return false;
  }
  return false;
}

bool hasCopyEngine(Collective collective) {
  switch (collective) {
    case Collective::AllGather:
    case Collective::Broadcast:
      return true;
    case Collective::AllReduce:
    case Collective::ReduceScatter:
    case Collective::Reduce:
    case Collective::AllToAll:
    case Collective::AllToAllv:
    case Collective::Gather:
    case Collective::Scatter:
    case Collective::SendRecv:
      return false;
  }
  return false;
}

Algorithm selectAlgorithm(Collective collective, size_t segBytes, int nRanks, const Config& config,
                          const ScratchLayout& layout, bool registered) {
  if (nRanks < 2) return Algorithm::Staged;
  const bool zeroCopy = registered && hasZeroCopy(collective);
  const bool copyEngine = registered && hasCopyEngine(collective);
  const PacketTiling tiling = makePacketTiling(segBytes, layout.maxBlocks, kLLPacketsPerBlock);
  const bool llFits = hasLLOneShot(collective) && tiling.packetsPerBlock <= layout.llSlotPackets;
  const bool twoShotFits = collective == Collective::AllReduce &&
                           twoShotTiling(segBytes, nRanks, layout.maxBlocks).packetsPerBlock <= layout.llSlotPackets;
  Algorithm wanted = Algorithm::Auto;
  if (config.selector) wanted = config.selector(collective, segBytes, nRanks);
  if (wanted == Algorithm::Auto) wanted = config.forceAlgorithm;
  if (wanted == Algorithm::Auto) {
    // One-shot sends the whole segment to every peer as packets of twice its size, so its traffic
    // grows with the peer count: it wins while that traffic costs less than two barrier hops.
    const bool small = segBytes * static_cast<size_t>(nRanks - 1) <= config.llMaxBytes;
    if (small && hasLLOneShot(collective)) {
      wanted = Algorithm::LLOneShot;
    } else if (twoShotFits && segBytes <= kLLTwoShotMaxBytes) {
      // Two-shot sends each byte twice as packets, whatever the rank count, and needs no barrier.
      wanted = Algorithm::LLTwoShot;
    } else {
      // Auto does not choose ZeroCopy or CopyEngine until they pass the GPU matrix on registered
      // buffers; they run only where forced (Config::forceAlgorithm, a selector, MSCCLPP_COLL_ALGO).
      wanted = Algorithm::Staged;
    }
  }
  if (wanted == Algorithm::LLOneShot && !llFits) return Algorithm::Staged;
  if (wanted == Algorithm::ZeroCopy && !zeroCopy) return Algorithm::Staged;
  if (wanted == Algorithm::LLTwoShot && !twoShotFits) return Algorithm::Staged;
  if (wanted == Algorithm::CopyEngine && !copyEngine) return Algorithm::Staged;
  return wanted;
}

}  // namespace collectives
}  // namespace mscclpp
