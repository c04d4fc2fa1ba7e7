// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/collectives/selection.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "common/checks.hpp"

namespace mscclpp {
namespace collectives {

namespace {

size_t parseSize(const char* name, const char* text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  size_t scale = 1;
  if (end != nullptr) {
    switch (*end) {
      case 'K':
      case 'k':
        scale = 1ull << 10;
        ++end;
        break;
      case 'M':
      case 'm':
        scale = 1ull << 20;
        ++end;
        break;
      case 'G':
      case 'g':
        scale = 1ull << 30;
        ++end;
        break;
      default:
        break;
    }
  }
  MSCCLPP_CHECK_USAGE(errno == 0 && end != text && *end == '\0' && text[0] != '-', name, "='", text,
                      "' is not a size (a number, optionally followed by K, M or G)");
  return static_cast<size_t>(value) * scale;
}

Algorithm parseAlgorithm(const char* name, const char* text) {
  const std::string value(text);
  if (value == "auto" || value.empty()) return Algorithm::Auto;
  if (value == "ll") return Algorithm::LLOneShot;
  if (value == "staged") return Algorithm::Staged;
  if (value == "zerocopy") return Algorithm::ZeroCopy;
  MSCCLPP_THROW(InvalidUsage, name, "='", text, "' is not one of auto, ll, staged, zerocopy");
}

}  // namespace

Config resolveConfig(const Config& config, int ranksPerGpu, const EnvLookup& lookup) {
  Config c = config;
  if (c.scratchBytes == 0) {
    const char* v = lookup("MSCCLPP_COLL_SCRATCH_BYTES");
    c.scratchBytes = v ? parseSize("MSCCLPP_COLL_SCRATCH_BYTES", v) : kDefaultScratchBytes;
  }
  if (c.maxBlocks == 0) {
    const char* v = lookup("MSCCLPP_COLL_MAX_BLOCKS");
    if (v) {
      c.maxBlocks = static_cast<int>(parseSize("MSCCLPP_COLL_MAX_BLOCKS", v));
    } else {
      const int share = kResidentBlocksPerGpu / (ranksPerGpu > 0 ? ranksPerGpu : 1);
      c.maxBlocks = std::max(1, std::min(share, kMaxBlocksPerLaunch));
    }
  }
  MSCCLPP_CHECK_USAGE(c.maxBlocks >= 1 && c.maxBlocks <= 1024, "maxBlocks must be in [1, 1024], got ", c.maxBlocks);
  if (c.llMaxBytes == 0) {
    const char* v = lookup("MSCCLPP_COLL_LL_MAX_BYTES");
    c.llMaxBytes = v ? parseSize("MSCCLPP_COLL_LL_MAX_BYTES", v) : kDefaultLLMaxBytes;
  }
  if (c.forceAlgorithm == Algorithm::Auto) {
    const char* v = lookup("MSCCLPP_COLL_ALGO");
    if (v) c.forceAlgorithm = parseAlgorithm("MSCCLPP_COLL_ALGO", v);
  }
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

Algorithm selectAlgorithm(Collective collective, size_t segBytes, int nRanks, const Config& config,
                          const ScratchLayout& layout, bool registered) {
  if (nRanks < 2) return Algorithm::Staged;
  const bool zeroCopy = registered && hasZeroCopy(collective);
  const PacketTiling tiling = makePacketTiling(segBytes, layout.maxBlocks, kLLPacketsPerBlock);
  const bool llFits = hasLLOneShot(collective) && tiling.packetsPerBlock <= layout.llSlotPackets;
  Algorithm wanted = Algorithm::Auto;
  if (config.selector) wanted = config.selector(collective, segBytes, nRanks);
  if (wanted == Algorithm::Auto) wanted = config.forceAlgorithm;
  if (wanted == Algorithm::Auto) {
    // One-shot sends the whole segment to every peer as packets of twice its size, so its traffic
    // grows with the peer count: it wins while that traffic costs less than two barrier hops. Above
    // that, registered buffers save the copies through scratch.
    const bool small = segBytes * static_cast<size_t>(nRanks - 1) <= config.llMaxBytes;
    if (small && hasLLOneShot(collective)) {
      wanted = Algorithm::LLOneShot;
    } else {
      wanted = zeroCopy ? Algorithm::ZeroCopy : Algorithm::Staged;
    }
  }
  if (wanted == Algorithm::LLOneShot && !llFits) return Algorithm::Staged;
  if (wanted == Algorithm::ZeroCopy && !zeroCopy) return Algorithm::Staged;
  return wanted;
}

}  // namespace collectives
}  // namespace mscclpp
