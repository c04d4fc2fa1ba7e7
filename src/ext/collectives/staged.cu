// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Staged reductions: all-reduce, reduce-scatter and reduce for messages too large for LL packets
// (whose flags double the bytes moved). Data moves through the peers' scratch in rounds; in each
// round, block b of every rank moves one tile of its part and meets block b of its peers at a
// barrier (device_common.hpp) before reading what they wrote.
//
// - All-reduce: reduce-scatter then all-gather, each rank owning one chunk of the message. A round
//   has three steps: (1) write my input's tile of chunk p into peer p's scratch; barrier; (2) reduce
//   the tile of my chunk from my input and the n-1 tiles received, in rank order, write it to my
//   output and into every peer's scratch; barrier; (3) copy the peers' reduced tiles into my output.
//   Each element is reduced by one rank in one order and then copied, so every rank holds the same
//   bits. The peers never touch this rank's user buffers, so in-place works and no barrier is needed
//   after the last step.
// - Reduce-scatter: step (1), barrier, step (2) without the forwarding.
// - Reduce: the non-roots write their tile into the root's scratch; barrier; the root reduces.
//
// Why the scratch never needs clearing and is never overwritten early: data written between a pair's
// barriers c and c+1 goes into half c % 2 of the receiving slot, and is read after barrier c+1. The
// next write into that half happens after barrier c+2, which the reader reached only after it had
// read. The halves follow each pair's own count, so calls that involve only some peers (a reduce, a
// send) keep every pair consistent.
//
// PreMulSum: each rank scales its own input (by its own scalar) as it copies it to a peer and as it
// reduces it itself, so the scratch holds scaled values only.
//
// Zero elements launch nothing on any rank; otherwise every rank launches the same blocks.

#include "ext/collectives/device_common.hpp"
#include "ext/collectives/tiling.hpp"

namespace mscclpp {
namespace collectives {

namespace {

/// reduceTile's loops, compiled once with and once without PreMulSum's scaling of the own input, so
/// that the loop without it carries no per-element test of r.preMultiplies.
template <typename T, ReduceSpec::Kind Kind, bool Forward, bool PreMultiplies, typename HalfOf, typename ForwardHalf>
__device__ __forceinline__ void reduceTileLoops(const DeviceState& s, const Reducer<T, Kind>& r, uint32_t block,
                                                int nSources, const T* own, T* out, uint64_t elems, HalfOf halfOf,
                                                ForwardHalf forwardHalf) {
  const int rank = s.rank;
  auto slot = [&](int q) {
    return reinterpret_cast<const T*>(s.scratch[rank] + s.layout.stagedSlot(halfOf(q), block, q));
  };
  auto forwardSlot = [&](int p) {
    return reinterpret_cast<T*>(s.scratch[p] + s.layout.stagedSlot(forwardHalf(p), block, rank));
  };
  const bool aligned = ((reinterpret_cast<uintptr_t>(own) | reinterpret_cast<uintptr_t>(out)) & 15) == 0;
  constexpr uint64_t kPerVec = 16 / sizeof(T);
  const uint64_t nVec = aligned ? elems / kPerVec : 0;
  for (uint64_t v = threadIdx.x; v < nVec; v += blockDim.x) {
    const Vec<T, 16> y = reduceInRankOrder(r, nSources, [&](int q) {
      if (q != rank) return reinterpret_cast<const uint4*>(slot(q))[v];
      const uint4 w = reinterpret_cast<const uint4*>(own)[v];
      return PreMultiplies ? prepareWord<T, Kind, 16>(r, w) : w;
    });
    reinterpret_cast<uint4*>(out)[v] = y.raw;
    if (Forward) {
      for (int t = 0; t < s.nRanks - 1; ++t) {
        const int p = t < rank ? t : t + 1;
        reinterpret_cast<uint4*>(forwardSlot(p))[v] = y.raw;
      }
    }
  }
  for (uint64_t i = nVec * kPerVec + threadIdx.x; i < elems; i += blockDim.x) {
    typename Reducer<T, Kind>::Acc acc{};
    for (int q = 0; q < nSources; ++q) {
      const T x = q == rank ? (PreMultiplies ? r.prepare(own[i]) : own[i]) : slot(q)[i];
      acc = q == 0 ? r.begin(x) : r.add(acc, x);
    }
    const T y = r.end(acc);
    out[i] = y;
    if (Forward) {
      for (int t = 0; t < s.nRanks - 1; ++t) {
        const int p = t < rank ? t : t + 1;
        forwardSlot(p)[i] = y;
      }
    }
  }
}

/// out[0, elems) = reduction over q in rank order of src(q)[0, elems), where src(rank) is `own` (passed
/// through r.prepare) and src(q) is this rank's scratch slot of q written in half halfOf(q). With
/// Forward, the result also goes into every peer's slot for this rank in half forwardHalf(p).
template <typename T, ReduceSpec::Kind Kind, bool Forward, typename HalfOf, typename ForwardHalf>
__device__ __forceinline__ void reduceTile(const DeviceState& s, const Reducer<T, Kind>& r, uint32_t block,
                                           int nSources, const T* own, T* out, uint64_t elems, HalfOf halfOf,
                                           ForwardHalf forwardHalf) {
  if (elems == 0) return;
  // PreMulSum is a Sum: the other kinds compile the loops without scaling only.
  constexpr bool kMayPreMultiply = Kind == ReduceSpec::Kind::Sum;
  if (kMayPreMultiply && r.preMultiplies) {
    reduceTileLoops<T, Kind, Forward, kMayPreMultiply>(s, r, block, nSources, own, out, elems, halfOf, forwardHalf);
  } else {
    reduceTileLoops<T, Kind, Forward, false>(s, r, block, nSources, own, out, elems, halfOf, forwardHalf);
  }
}

/// [begin, end) of a tile clipped to `limit`, as (start, length).
struct Span {
  uint64_t start;
  uint64_t length;
};
__device__ __forceinline__ Span clip(uint64_t base, uint64_t begin, uint64_t end, uint64_t limit) {
  const uint64_t a = base + begin < limit ? base + begin : limit;
  const uint64_t b = base + end < limit ? base + end : limit;
  return {a, b - a};
}

template <typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    stagedAllReduceKernel(DeviceState s, const T* send, T* recv, uint64_t count, uint64_t chunkElems, Tiling tiling,
                          ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  __shared__ BlockCounts counts;
  loadCounts(s, b, counts);
  const Reducer<T, Kind> r(spec, s.nRanks);
  const int rank = s.rank, n = s.nRanks;
  const AllPeers peers{rank};
  for (uint64_t k = 0; k < tiling.rounds; ++k) {
    const uint64_t tb = tiling.tileBegin(b, k), te = tiling.tileEnd(b, k);
    for (int t = 0; t < n - 1; ++t) {
      const int p = peers(t);
      const Span sp = clip(p * chunkElems, tb, te, count);
      T* dst = reinterpret_cast<T*>(s.scratch[p] + s.layout.stagedSlot(counts.count[p] & 1, b, rank));
      copyPrepared(r, dst, send + sp.start, sp.length);
    }
    barrier(s, b, counts, n - 1, peers);
    const Span mine = clip(rank * chunkElems, tb, te, count);
    reduceTile<T, Kind, true>(
        s, r, b, n, send + mine.start, recv + mine.start, mine.length,
        [&](int q) { return static_cast<uint32_t>((counts.count[q] - 1) & 1); },
        [&](int p) { return static_cast<uint32_t>(counts.count[p] & 1); });
    barrier(s, b, counts, n - 1, peers);
    for (int t = 0; t < n - 1; ++t) {
      const int q = peers(t);
      const Span sq = clip(q * chunkElems, tb, te, count);
      const char* src = s.scratch[rank] + s.layout.stagedSlot((counts.count[q] - 1) & 1, b, q);
      copyBytes(reinterpret_cast<char*>(recv + sq.start), src, sq.length * sizeof(T));
    }
  }
  storeCounts(s, b, counts);
}

template <typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    stagedReduceScatterKernel(DeviceState s, const T* send, T* recv, uint64_t count, Tiling tiling, ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  __shared__ BlockCounts counts;
  loadCounts(s, b, counts);
  const Reducer<T, Kind> r(spec, s.nRanks);
  const int rank = s.rank, n = s.nRanks;
  const AllPeers peers{rank};
  for (uint64_t k = 0; k < tiling.rounds; ++k) {
    const uint64_t tb = tiling.tileBegin(b, k), te = tiling.tileEnd(b, k);
    for (int t = 0; t < n - 1; ++t) {
      const int p = peers(t);
      T* dst = reinterpret_cast<T*>(s.scratch[p] + s.layout.stagedSlot(counts.count[p] & 1, b, rank));
      copyPrepared(r, dst, send + p * count + tb, te - tb);
    }
    barrier(s, b, counts, n - 1, peers);
    reduceTile<T, Kind, false>(
        s, r, b, n, send + rank * count + tb, recv + tb, te - tb,
        [&](int q) { return static_cast<uint32_t>((counts.count[q] - 1) & 1); }, [](int) { return 0u; });
  }
  storeCounts(s, b, counts);
}

template <typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    stagedReduceKernel(DeviceState s, const T* send, T* recv, uint64_t count, int root, Tiling tiling,
                       ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  __shared__ BlockCounts counts;
  loadCounts(s, b, counts);
  const Reducer<T, Kind> r(spec, s.nRanks);
  const int rank = s.rank, n = s.nRanks;
  for (uint64_t k = 0; k < tiling.rounds; ++k) {
    const uint64_t tb = tiling.tileBegin(b, k), te = tiling.tileEnd(b, k);
    if (rank != root) {
      T* dst = reinterpret_cast<T*>(s.scratch[root] + s.layout.stagedSlot(counts.count[root] & 1, b, rank));
      copyPrepared(r, dst, send + tb, te - tb);
      barrier(s, b, counts, 1, OnePeer{root});
    } else {
      barrier(s, b, counts, n - 1, AllPeers{rank});
      reduceTile<T, Kind, false>(
          s, r, b, n, send + tb, recv + tb, te - tb,
          [&](int q) { return static_cast<uint32_t>((counts.count[q] - 1) & 1); }, [](int) { return 0u; });
    }
  }
  storeCounts(s, b, counts);
}

Tiling stagedTiling(const DeviceState& s, uint64_t elems, uint32_t elemSize) {
  return makeTiling(elems, elemSize, s.layout.maxBlocks, s.layout.stagedSlotBytes, kStagedBytesPerBlock);
}

template <typename T, ReduceSpec::Kind Kind>
void runAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, const ReduceSpec& spec,
                  cudaStream_t stream) {
  const uint64_t chunkElems = allReduceChunkElems(count, sizeof(T), s.nRanks);
  const Tiling tiling = stagedTiling(s, chunkElems, sizeof(T));
  if (tiling.nBlocks == 0) return;
  launchKernel(stagedAllReduceKernel<T, Kind>, dim3(tiling.nBlocks), dim3(kBlockThreads), 0, stream, s.dependentLaunch,
               s, static_cast<const T*>(send), static_cast<T*>(recv), count, chunkElems, tiling, spec);
}

template <typename T, ReduceSpec::Kind Kind>
void runReduceScatter(const DeviceState& s, const void* send, void* recv, uint64_t count, const ReduceSpec& spec,
                      cudaStream_t stream) {
  const Tiling tiling = stagedTiling(s, count, sizeof(T));
  if (tiling.nBlocks == 0) return;
  launchKernel(stagedReduceScatterKernel<T, Kind>, dim3(tiling.nBlocks), dim3(kBlockThreads), 0, stream,
               s.dependentLaunch, s, static_cast<const T*>(send), static_cast<T*>(recv), count, tiling, spec);
}

template <typename T, ReduceSpec::Kind Kind>
void runReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, int root, const ReduceSpec& spec,
               cudaStream_t stream) {
  const Tiling tiling = stagedTiling(s, count, sizeof(T));
  if (tiling.nBlocks == 0) return;
  launchKernel(stagedReduceKernel<T, Kind>, dim3(tiling.nBlocks), dim3(kBlockThreads), 0, stream, s.dependentLaunch, s,
               static_cast<const T*>(send), static_cast<T*>(recv), count, root, tiling, spec);
}

}  // namespace

void launchStagedAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                           const ReduceSpec& op, cudaStream_t stream) {
  MSCCLPP_COLL_DISPATCH(runAllReduce, type, op.kind, s, send, recv, count, op, stream);
}

void launchStagedReduceScatter(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                               const ReduceSpec& op, cudaStream_t stream) {
  MSCCLPP_COLL_DISPATCH(runReduceScatter, type, op.kind, s, send, recv, count, op, stream);
}

void launchStagedReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                        const ReduceSpec& op, int root, cudaStream_t stream) {
  MSCCLPP_COLL_DISPATCH(runReduce, type, op.kind, s, send, recv, count, root, op, stream);
}

}  // namespace collectives
}  // namespace mscclpp
