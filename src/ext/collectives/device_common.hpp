// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What only the collective kernels need: the per-block barrier between ranks and the dispatch of a
// launcher over (element type, reduction kind). Element arithmetic, copies and the spin limit are
// the extensions' shared ones (ext/common/device_ops.hpp). Included by the .cu files of this folder only.

#ifndef MSCCLPP_EXT_COLLECTIVES_DEVICE_COMMON_HPP_
#define MSCCLPP_EXT_COLLECTIVES_DEVICE_COMMON_HPP_

#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/packet_device.hpp>
#include <mscclpp/poll_device.hpp>

#include "common/checks.hpp"
#include "ext/collectives/kernels.hpp"
#include "ext/common/dependent_launch.hpp"
#include "ext/common/device_ops.hpp"
#include "ext/common/element_types.hpp"

namespace mscclpp {
namespace collectives {

using ext::copyBytes;
using ext::copyPrepared;
using ext::kSpinLimit;
using ext::launchKernel;
using ext::load8;
using ext::prepareWord;
using ext::Reducer;
using ext::store8;
using ext::storeEvictFirst;
using ext::Vec;
using ext::VecAcc;
using ext::waitForPriorKernels;

/// The barrier counts of one block with every rank, kept in shared memory for the kernel's duration.
struct BlockCounts {
  uint64_t count[kMaxRanks];
};

__device__ __forceinline__ void loadCounts(const DeviceState& s, uint32_t block, BlockCounts& c) {
  for (int p = threadIdx.x; p < s.nRanks; p += blockDim.x) c.count[p] = s.barrierCounts[block * s.nRanks + p];
  __syncthreads();
}

__device__ __forceinline__ void storeCounts(const DeviceState& s, uint32_t block, const BlockCounts& c) {
  __syncthreads();
  for (int p = threadIdx.x; p < s.nRanks; p += blockDim.x) s.barrierCounts[block * s.nRanks + p] = c.count[p];
}

/// What a barrier tells the peers besides its count.
enum class Tell {
  /// Everything the block wrote (or read) before: a release fence precedes the store, of device scope
  /// for a peer on this GPU (DeviceState::ranksOnThisGpu: every thread that accesses the memory is on
  /// this device, and the fence's cost is that of this GPU's L2, not of the system), of system scope
  /// for a peer on another GPU.
  Accesses,
  /// Only that this rank's stream reached the call, for the opening barrier of a kernel that has not
  /// yet accessed any peer's buffer: a relaxed store, no fence. What the peers then access of this
  /// rank's (its input, its output's earlier contents) was written and read by work before this kernel
  /// on this rank's stream, which had completed, with its memory operations, when this kernel began
  /// (prior kernels and copies end before a kernel starts, waitForPriorKernels included), and it lives
  /// in this GPU's memory, where every peer's access goes through this GPU's L2. A fence would order
  /// nothing further, and a system-scope fence costs about 2 us per small call on an H100 (docs/performance.md,
  /// 2026-12-07). The peers' acquire still orders their accesses after they read the count.
  Arrival,
  /// That the block is done reading the peers' buffers, for the closing barrier of a kernel that only
  /// loaded from peers and stored only into this rank's own memory: a relaxed store, no fence. Every
  /// value the block loaded was stored before the barrier's __syncthreads, so the loads had returned,
  /// and no store a peer makes after seeing the count can change them; the block's own stores are for
  /// this rank alone and are final when the kernel ends. A peer may reuse its input after this.
  LoadsReturned,
};

/// Block `block` of this rank meets block `block` of each rank peerOf(0..nPeers-1): with
/// Tell::Accesses every access the block made before is visible to those peers' blocks after, and
/// theirs to this block. One thread per peer publishes the new count into the peer's flag and waits
/// for the peer's with an acquire; __syncthreads on both sides extends that to the block.
/// Device scope is enough for a peer on this GPU, for the fence and for the acquire alike: the peer's
/// threads run on this device, so each side's operation is within the other's scope, and
/// __syncthreads makes the fence cumulative over the block's accesses. A device-scope acquire also
/// polls faster than a system-scope one: the 4-rank zero-copy all-gather of 1 MiB took 5.48-5.51 us in
/// place against 5.62-5.64 (H100, 2026-12-08, docs/performance.md). Relaxed polls followed by one
/// acquire fence were slower (6.85-6.92 us): the fence costs more than the acquiring loads.
template <typename PeerOf>
__device__ __forceinline__ void barrier(const DeviceState& s, uint32_t block, BlockCounts& c, int nPeers, PeerOf peerOf,
                                        Tell tell = Tell::Accesses) {
  __syncthreads();
  for (int t = threadIdx.x; t < nPeers; t += blockDim.x) {
    const int p = peerOf(t);
    const uint64_t value = c.count[p] + 1;
    c.count[p] = value;
    uint64_t* remote = reinterpret_cast<uint64_t*>(s.scratch[p] + s.layout.flag(block, s.rank));
    const uint64_t* mine = reinterpret_cast<const uint64_t*>(s.scratch[s.rank] + s.layout.flag(block, p));
    const bool onThisGpu = (s.ranksOnThisGpu >> p) & 1;
    if (tell == Tell::Accesses) {
      if (onThisGpu) {
        detail::atomicFence<scopeDevice>(memoryOrderRelease);
      } else {
        detail::atomicFence<scopeSystem>(memoryOrderRelease);
      }
    }
    atomicStore<uint64_t, scopeSystem>(remote, value, memoryOrderRelaxed);
    if (onThisGpu) {
      POLL_MAYBE_JAILBREAK((atomicLoad<uint64_t, scopeDevice>(mine, memoryOrderAcquire) < value), kSpinLimit);
    } else {
      POLL_MAYBE_JAILBREAK((atomicLoad<uint64_t, scopeSystem>(mine, memoryOrderAcquire) < value), kSpinLimit);
    }
  }
  __syncthreads();
}

/// Sources whose words one thread loads before it adds the first of them.
constexpr int kLoadGroup = 8;

/// The reduction in rank order of load(q) for every source q < n (a 16-byte word each). The words of a
/// group of kLoadGroup sources are all loaded before the first of them is added, so that their
/// latencies overlap instead of following one another; the adds stay in rank order, so every rank
/// that reduces the same words gets the same bits.
template <typename T, ReduceSpec::Kind Kind, typename Load>
__device__ __forceinline__ Vec<T, 16> reduceInRankOrder(const Reducer<T, Kind>& r, int n, Load load) {
  VecAcc<T, Kind, 16> acc;
  for (int q0 = 0; q0 < n; q0 += kLoadGroup) {
    Vec<T, 16> x[kLoadGroup];
#pragma unroll
    for (int j = 0; j < kLoadGroup; ++j) {
      if (q0 + j < n) x[j].raw = load(q0 + j);
    }
#pragma unroll
    for (int j = 0; j < kLoadGroup; ++j) {
      if (q0 + j == 0) {
        acc.begin(r, x[j]);
      } else if (q0 + j < n) {
        acc.add(r, x[j]);
      }
    }
  }
  return acc.end(r);
}

/// Peers other than this rank, in rank order: t -> the t-th of them.
struct AllPeers {
  int rank;
  __device__ __forceinline__ int operator()(int t) const { return t < rank ? t : t + 1; }
};

struct OnePeer {
  int peer;
  __device__ __forceinline__ int operator()(int) const { return peer; }
};

}  // namespace collectives
}  // namespace mscclpp

/// Calls F<T, Kind>(args...) for the runtime (type, kind): one instantiation per element type and
/// reduction kind. F is a function template name.
#define MSCCLPP_COLL_DISPATCH_KIND(F, T, kind, ...)                        \
  do {                                                                     \
    switch (kind) {                                                        \
      case ::mscclpp::collectives::ReduceSpec::Kind::Sum:                  \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Sum>(__VA_ARGS__);  \
        break;                                                             \
      case ::mscclpp::collectives::ReduceSpec::Kind::Prod:                 \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Prod>(__VA_ARGS__); \
        break;                                                             \
      case ::mscclpp::collectives::ReduceSpec::Kind::Max:                  \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Max>(__VA_ARGS__);  \
        break;                                                             \
      case ::mscclpp::collectives::ReduceSpec::Kind::Min:                  \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Min>(__VA_ARGS__);  \
        break;                                                             \
    }                                                                      \
  } while (0)

/// Calls F<T, Kind>(args...) with the C++ type of the runtime `type` (ext/common/element_types.hpp)
/// and the runtime reduction `kind`. Throws Error(InvalidUsage) for a value that is not a DataType, and
/// for FP8 where the GPU toolkit has no FP8 types (HIP before ROCm 6), before anything is launched.
#define MSCCLPP_COLL_DISPATCH(F, type, kind, ...)                                                          \
  do {                                                                                                     \
    const bool known_ = ::mscclpp::ext::withElementType(type, [&](auto tag_) {                             \
      using T_ = typename decltype(tag_)::Type;                                                            \
      if constexpr (::mscclpp::ext::kHasArithmetic<T_>) {                                                  \
        MSCCLPP_COLL_DISPATCH_KIND(F, T_, kind, __VA_ARGS__);                                              \
      } else {                                                                                             \
        MSCCLPP_THROW(InvalidUsage, "FP8 reductions are not available: the GPU toolkit has no FP8 types"); \
      }                                                                                                    \
    });                                                                                                    \
    MSCCLPP_CHECK_USAGE(known_, "unknown data type ", static_cast<int>(type));                             \
  } while (0)

#endif  // MSCCLPP_EXT_COLLECTIVES_DEVICE_COMMON_HPP_
