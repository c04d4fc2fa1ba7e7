// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What the host passes to the collective kernels, and the launchers, one family per file:
// ll_one_shot.cu (LL packets, all pairs), ll_two_shot.cu (LL packets, reduce-scatter then
// all-gather), staged.cu (reductions through scratch in barrier-separated rounds), pairwise.cu (data
// movement between pairs of ranks through scratch), zero_copy.cu (registered buffers read and
// written in place) and copy_engine.cu (copies into registered buffers by the copy engines).
// Everything a kernel needs travels in its parameters, so a captured graph holds no pointer into host
// memory.

#ifndef MSCCLPP_EXT_COLLECTIVES_KERNELS_HPP_
#define MSCCLPP_EXT_COLLECTIVES_KERNELS_HPP_

#include <cstdint>
#include <mscclpp/collectives.hpp>
#include <mscclpp/gpu.hpp>

#include "ext/collectives/layout.hpp"
#include "ext/common/reduction.hpp"

namespace mscclpp {
namespace collectives {

/// The resources of one Collectives object, as its kernels see them.
struct DeviceState {
  ScratchLayout layout;
  int rank = 0;
  int nRanks = 0;
  /// Every rank's scratch, mapped into this process (this rank's own at [rank]).
  char* scratch[kMaxRanks] = {};
  /// barrierCounts[b * nRanks + p]: barriers block b has passed with rank p (device memory, local).
  uint64_t* barrierCounts = nullptr;
  /// llEpochs[b]: LL calls block b has taken part in (device memory, local).
  uint64_t* llEpochs = nullptr;
  /// Bit p: rank p runs on this rank's GPU (processes sharing it, as under MPS), so its blocks and
  /// this rank's share one memory and one L2, and a device-scope fence orders this rank's accesses
  /// for it (device_common.hpp, barrier).
  uint64_t ranksOnThisGpu = 0;
  /// For the host: every kernel is launched dependent on the kernel before it (ext/common/
  /// dependent_launch.hpp; every kernel begins with waitForPriorKernels).
  bool dependentLaunch = false;
  /// For the host: the most blocks a zero-copy launch of this call may use, from a tuning rule
  /// (selection.hpp); 0: layout.maxBlocks. Every rank's call carries the same count, so block b of
  /// every rank still covers the same elements.
  uint32_t zeroCopyBlocks = 0;
};

/// Whether the collective kernels may be launched dependent on the current GPU.
bool collectiveKernelsLaunchDependent();

/// The reduction as kernels receive it (ext/common/reduction.hpp).
using ext::ReduceSpec;

/// The kernel-side form of `op`.
ReduceSpec makeReduceSpec(const ReduceOp& op);

// LL one-shot (ll_one_shot.cu). `segBytes` is what one rank sends one peer.
void launchLLAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                       const ReduceSpec& op, cudaStream_t stream);
void launchLLReduceScatter(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                           const ReduceSpec& op, cudaStream_t stream);
void launchLLAllGather(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, cudaStream_t stream);
void launchLLAllToAll(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, cudaStream_t stream);

// LL two-shot all-reduce (ll_two_shot.cu).
void launchLLTwoShotAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                              const ReduceSpec& op, cudaStream_t stream);

// Staged reductions (staged.cu).
void launchStagedAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                           const ReduceSpec& op, cudaStream_t stream);
void launchStagedReduceScatter(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                               const ReduceSpec& op, cudaStream_t stream);
void launchStagedReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                        const ReduceSpec& op, int root, cudaStream_t stream);

/// One user buffer as every rank sees it: ptr[q] is rank q's buffer, mapped into this process
/// (this rank's own at [rank]). Filled from a registration (registry.hpp).
struct PeerBuffers {
  char* ptr[kMaxRanks] = {};
};

// Zero-copy on registered buffers (zero_copy.cu). `in` and `out` are the send and recv buffers of
// every rank; all-gather reads only this rank's `send`, reduce-scatter writes only this rank's `recv`.
void launchZeroCopyAllReduce(const DeviceState& s, const PeerBuffers& in, const PeerBuffers& out, uint64_t count,
                             DataType type, const ReduceSpec& op, cudaStream_t stream);
void launchZeroCopyReduceScatter(const DeviceState& s, const PeerBuffers& in, void* recv, uint64_t count, DataType type,
                                 const ReduceSpec& op, cudaStream_t stream);
void launchZeroCopyAllGather(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t segBytes,
                             cudaStream_t stream);

// Copy engines into registered receive buffers (copy_engine.cu).
void launchCopyEngineAllGather(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t segBytes,
                               cudaStream_t stream);
void launchCopyEngineBroadcast(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t bytes, int root,
                               cudaStream_t stream);
/// Out of place only: part p of `send` (segBytes) into slot rank of peer p's registered output.
void launchCopyEngineAllToAll(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t segBytes,
                              cudaStream_t stream);

/// One transfer between this rank and `peer`: up to sendBytes from `send` to the peer and up to
/// recvBytes from the peer into `recv`. The i-th entry with a peer pairs with the peer's i-th entry
/// with this rank, whose sendBytes is this entry's recvBytes and vice versa.
struct PairEntry {
  int peer = 0;
  const char* send = nullptr;
  uint64_t sendBytes = 0;
  char* recv = nullptr;
  uint64_t recvBytes = 0;
};

constexpr int kMaxPairEntries = 128;

/// Transfers with several peers at once (pairwise.cu): the entries with one peer in pair order
/// (entries with different peers may interleave). Self transfers are not entries (the caller copies
/// them).
struct PairPlan {
  int nEntries = 0;
  PairEntry entries[kMaxPairEntries];
  /// Filled by launchPairwise: entries grouped by peer, group g being [groupBegin[g], groupBegin[g+1]).
  int nGroups = 0;
  int groupBegin[kMaxRanks + 1] = {};
};

/// Blocks given to each peer of a pairwise launch: a function of the rank count only, so that the
/// two ranks of a pair agree without asking each other.
uint32_t pairBlocksPerPeer(const DeviceState& s);

void launchPairwise(const DeviceState& s, PairPlan plan, cudaStream_t stream);

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_KERNELS_HPP_
