// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Which algorithm a call runs with, and the defaults behind Config. Pure host logic, so that the
// tables are tested without a GPU (test/unit/collectives_selection_test.cc).

#ifndef MSCCLPP_EXT_COLLECTIVES_SELECTION_HPP_
#define MSCCLPP_EXT_COLLECTIVES_SELECTION_HPP_

#include <cstddef>
#include <cstdint>
#include <mscclpp/collectives.hpp>
#include <mscclpp/env.hpp>

#include "ext/collectives/layout.hpp"
#include "ext/collectives/tuning.hpp"

namespace mscclpp {
namespace collectives {

/// Blocks the ranks sharing one GPU may keep resident together: a kernel that waits for a peer must
/// never need more blocks than fit beside the peer's kernel (132 SMs on an H200, a few kept free).
constexpr int kResidentBlocksPerGpu = 128;
constexpr int kMaxBlocksPerLaunch = 64;

/// `config` with every zero or empty field replaced by the value `env` read (Env::collScratchBytes,
/// collMaxBlocks, collLLMaxBytes, collAlgo, collTuningFile, which hold the defaults where the variables
/// are unset),
/// where `ranksPerGpu` ranks share this rank's GPU. Throws Error(InvalidUsage) for an explicit
/// maxBlocks outside [1, 1024].
Config resolveConfig(const Config& config, int ranksPerGpu, const Env& env);

/// Which algorithms besides Staged (which every collective has) `collective` has a variant of.
struct Variants {
  bool llOneShot;   ///< LL one-shot: all-pairs, both directions in every call.
  bool zeroCopy;    ///< Zero-copy on registered buffers (zero_copy.cu).
  bool copyEngine;  ///< Copy engines into registered receive buffers (copy_engine.cu).
};
Variants variantsOf(Collective collective);

/// The algorithm for a call of `collective` whose per-pair segment is `segmentBytes`, among `nRanks`
/// ranks, under a resolved `config` and a scratch of `layout`; `registered` says whether the call's
/// buffers lie in registrations that allow ZeroCopy or CopyEngine (Auto takes them on registered
/// buffers from the sizes of its table in selection.cc). A forced LL falls back to Staged where the
/// collective has no LL variant or the segment does not fit the LL slots; a forced ZeroCopy does where
/// the collective has no zero-copy variant or the buffers are not registered, and a forced LLTwoShot
/// where the collective is not all-reduce or the message does not fit the LL slots; so does a forced
/// CopyEngine where the collective has none or the buffers are not registered.
/// `tuning`, where given, is asked after the config's selector and forced algorithm and before Auto's
/// own table; a tuned algorithm falls back as a forced one does. `blocks`, where given, receives the
/// most thread blocks the call may launch: the tuning rule's count where that rule chose the ZeroCopy
/// returned, else 0 (as many as the algorithm's tiling takes, up to layout.maxBlocks).
Algorithm selectAlgorithm(Collective collective, size_t segmentBytes, int nRanks, const Config& config,
                          const ScratchLayout& layout, bool registered, const TuningTable* tuning = nullptr,
                          uint32_t* blocks = nullptr);

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_SELECTION_HPP_
