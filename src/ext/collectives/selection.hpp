// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Which algorithm a call runs with, and the defaults behind Config. Pure host logic, so that the
// tables are tested without a GPU (test/unit/collectives_selection_test.cc).

#ifndef MSCCLPP_EXT_COLLECTIVES_SELECTION_HPP_
#define MSCCLPP_EXT_COLLECTIVES_SELECTION_HPP_

#include <cstddef>
#include <mscclpp/collectives.hpp>
#include <mscclpp/env.hpp>

#include "ext/collectives/layout.hpp"

namespace mscclpp {
namespace collectives {

/// Blocks the ranks sharing one GPU may keep resident together: a kernel that waits for a peer must
/// never need more blocks than fit beside the peer's kernel (132 SMs on an H200, a few kept free).
constexpr int kResidentBlocksPerGpu = 128;
constexpr int kMaxBlocksPerLaunch = 64;

/// `config` with every zero field replaced by the value `env` read (Env::collScratchBytes,
/// collMaxBlocks, collLLMaxBytes, collAlgo, which hold the defaults where the variables are unset),
/// where `ranksPerGpu` ranks share this rank's GPU. Throws Error(InvalidUsage) for an explicit
/// maxBlocks outside [1, 1024].
Config resolveConfig(const Config& config, int ranksPerGpu, const Env& env);

/// Whether `collective` has an LL one-shot variant (all-pairs, both directions in every call).
bool hasLLOneShot(Collective collective);

/// The algorithm for a call of `collective` whose per-pair segment is `segmentBytes`, among `nRanks`
/// ranks, under a resolved `config` and a scratch of `layout`. A forced LL falls back to Staged
/// where the collective has no LL variant or the segment does not fit the LL slots.
Algorithm selectAlgorithm(Collective collective, size_t segmentBytes, int nRanks, const Config& config,
                          const ScratchLayout& layout);

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_SELECTION_HPP_
