// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Zero-copy collectives on registered buffers (registry.hpp): the kernels read the peers' inputs and
// write the peers' outputs in place, through the mappings registration made, and never touch scratch.
//
// - All-reduce, one pass: rank r owns chunk r of the message. Every block of r reads its part of chunk
//   r from every rank's input (16-byte loads where every pointer allows it), reduces in registers in
//   rank order 0..n-1, and stores the result into every rank's output. It moves 2 n S bytes, where a
//   reduce-scatter followed by an all-gather through scratch moves (3n - 1) S.
// - Reduce-scatter: rank r reduces slice r of every rank's input into its own output.
// - All-gather: rank r copies its input into slot r of every rank's output, loading each word once.
//
// Why it is correct:
// - Readiness. Block b of every rank meets block b of every peer at a barrier (device_common.hpp) before
//   it reads or writes anything of theirs. A rank reaches that barrier only once its stream got to this
//   call, so the peer's input is complete, and whatever the peer's stream did with its output before
//   this call is finished, in the peer's memory, which this rank accesses through the peer's L2. So the
//   barrier only tells the arrival (Tell::Arrival: no fence, whose system scope would cost more than the
//   rest of a small call); this rank's acquire orders its accesses after it. Block b of every rank covers
//   the same elements of every chunk, so meeting block b is enough for the part block b touches.
// - Completion. Each block meets block b of every peer again after its stores: past that barrier, every
//   rank's block b has stored into this rank's output and stopped reading this rank's input. A kernel
//   ends when all its blocks have, so when the call ends on this rank's stream its output is final and
//   its input may be reused: the next call, or any work the caller queues, cannot race with a peer.
//   The all-reduce and the all-gather store into peers and publish those stores with the closing
//   barrier's fence (Tell::Accesses). The reduce-scatter only loads from peers and stores into this
//   rank's own output: its closing barrier says only that the loads have returned
//   (Tell::LoadsReturned, no fence), and its stores are final when the kernel ends.
// - In place (send == recv): chunk r of every rank's buffer is read and then written by the same
//   thread of rank r only; no other rank reads chunk r, so no input is overwritten before it is read.
//   Reduce-scatter in place writes slice r of this rank's own buffer, which only this rank reads.
// - Bit-identical results: each element is reduced once, by its owner, in rank order, and the same
//   bits are stored everywhere.
// - Calls of other algorithms: the barrier counts are per (block, peer) and advance by the same number
//   of barriers on both sides of a pair in every call, so the staged and pairwise kernels that follow
//   find them consistent. These kernels use no scratch slot, so no slot's half changes meaning.
// - PreMulSum is not run here (selection says why): it needs each rank's scalar, which only its own
//   rank holds.

#include "ext/collectives/device_common.hpp"
#include "ext/collectives/tiling.hpp"

namespace mscclpp {
namespace collectives {

namespace {

/// Whether every rank's pointer in `b` is 16-byte aligned; every rank computes the same answer, since
/// a mapping keeps the offset of the peer's pointer within its allocation.
__device__ __forceinline__ bool allAligned16(const PeerBuffers& b, int n) {
  uintptr_t bits = 0;
  for (int q = 0; q < n; ++q) bits |= reinterpret_cast<uintptr_t>(b.ptr[q]);
  return (bits & 15) == 0;
}

/// out of every rank [begin, end) = reduction in rank order of in of every rank [begin, end), offsets
/// in elements of T. `Everywhere` stores into every rank's output, otherwise only into `local`.
/// `basesAligned`: every pointer in `in` and the output pointers are 16-byte aligned.
template <typename T, ReduceSpec::Kind Kind, bool Everywhere>
__device__ __forceinline__ void reduceRange(const Reducer<T, Kind>& r, int n, const PeerBuffers& in, uint64_t inOffset,
                                            const PeerBuffers& out, T* local, uint64_t outOffset, uint64_t elems,
                                            bool basesAligned) {
  constexpr uint64_t kPerVec = 16 / sizeof(T);
  // Aligned bases are not enough: the offsets must keep the alignment too (a reduce-scatter slice
  // starts at rank x count elements, which need not be a multiple of 16 bytes).
  const bool vectors = basesAligned && (inOffset * sizeof(T)) % 16 == 0 && (outOffset * sizeof(T)) % 16 == 0;
  const uint64_t nVec = vectors ? elems / kPerVec : 0;
  for (uint64_t v = threadIdx.x; v < nVec; v += blockDim.x) {
    const Vec<T, 16> y = reduceInRankOrder(r, n, [&](int q) {
      return reinterpret_cast<const uint4*>(reinterpret_cast<const T*>(in.ptr[q]) + inOffset)[v];
    });
    if (Everywhere) {
      for (int p = 0; p < n; ++p) reinterpret_cast<uint4*>(reinterpret_cast<T*>(out.ptr[p]) + outOffset)[v] = y.raw;
    } else {
      reinterpret_cast<uint4*>(local + outOffset)[v] = y.raw;
    }
  }
  for (uint64_t i = nVec * kPerVec + threadIdx.x; i < elems; i += blockDim.x) {
    typename Reducer<T, Kind>::Acc acc{};
    for (int q = 0; q < n; ++q) {
      const T x = reinterpret_cast<const T*>(in.ptr[q])[inOffset + i];
      acc = q == 0 ? r.begin(x) : r.add(acc, x);
    }
    const T y = r.end(acc);
    if (Everywhere) {
      for (int p = 0; p < n; ++p) reinterpret_cast<T*>(out.ptr[p])[outOffset + i] = y;
    } else {
      local[outOffset + i] = y;
    }
  }
}

template <typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    zeroCopyAllReduceKernel(DeviceState s, PeerBuffers in, PeerBuffers out, uint64_t count, uint64_t chunkElems,
                            Tiling tiling, ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  __shared__ BlockCounts counts;
  loadCounts(s, b, counts);
  const Reducer<T, Kind> r(spec, s.nRanks);
  const int n = s.nRanks;
  const AllPeers peers{s.rank};
  const bool vectors = allAligned16(in, n) && allAligned16(out, n);
  barrier(s, b, counts, n - 1, peers, Tell::Arrival);
  const uint64_t chunkBegin = s.rank * chunkElems;
  const uint64_t chunkEnd = chunkBegin + chunkElems < count ? chunkBegin + chunkElems : count;
  const uint64_t begin = chunkBegin + tiling.tileBegin(b, 0), end = chunkBegin + tiling.tileEnd(b, 0);
  const uint64_t clippedBegin = begin < chunkEnd ? begin : chunkEnd, clippedEnd = end < chunkEnd ? end : chunkEnd;
  reduceRange<T, Kind, true>(r, n, in, clippedBegin, out, nullptr, clippedBegin, clippedEnd - clippedBegin, vectors);
  barrier(s, b, counts, n - 1, peers);
  storeCounts(s, b, counts);
}

template <typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    zeroCopyReduceScatterKernel(DeviceState s, PeerBuffers in, T* recv, uint64_t count, Tiling tiling,
                                ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  __shared__ BlockCounts counts;
  loadCounts(s, b, counts);
  const Reducer<T, Kind> r(spec, s.nRanks);
  const int n = s.nRanks;
  const AllPeers peers{s.rank};
  const bool vectors = allAligned16(in, n) && (reinterpret_cast<uintptr_t>(recv) & 15) == 0;
  barrier(s, b, counts, n - 1, peers, Tell::Arrival);
  const uint64_t begin = tiling.tileBegin(b, 0), end = tiling.tileEnd(b, 0);
  reduceRange<T, Kind, false>(r, n, in, s.rank * count + begin, PeerBuffers{}, recv, begin, end - begin, vectors);
  barrier(s, b, counts, n - 1, peers, Tell::LoadsReturned);
  storeCounts(s, b, counts);
}

/// Copies src[0, bytes) to out.ptr[p] + offset for every rank p < n, in the order first, first + 1, ...
/// (mod n; starting with a different peer on every rank spreads the writes over the links), reading
/// each source word once: a block-cooperative copy per destination would read the source n times.
/// Each thread loads up to kInFlight 16-byte words before it stores them everywhere, so their latencies
/// overlap, also in the last step, where fewer remain (a 16 KiB tile is two words per thread). A
/// destination equal to src (in place) is skipped. Needs src and every destination 16-byte aligned.
/// The first words are loaded by `prefetch`, before the caller's barrier: the source is this rank's
/// own input, complete once its stream reached the kernel, so its latency hides behind the barrier.
template <int kInFlight>
class CopyToEvery16 {
 public:
  __device__ __forceinline__ CopyToEvery16(const char* src, uint64_t bytes)
      : src_(reinterpret_cast<const uint4*>(src)), bytes_(bytes), nVec_(bytes / 16), step_(blockDim.x) {}

  __device__ __forceinline__ void prefetch() { load(threadIdx.x); }

  /// `evictFirst`: store with the evict-first hint (storeEvictFirst), for large parts
  /// (kZeroCopyEvictFirstMinBytes): this kernel never reads back what it stores.
  __device__ __forceinline__ void run(const PeerBuffers& out, uint64_t offset, int n, int first, bool evictFirst) {
    for (uint64_t v = threadIdx.x; v < nVec_; v += kInFlight * step_) {
      if (v != threadIdx.x) load(v);
      for (int t = 0, p = first; t < n; ++t, p = p + 1 == n ? 0 : p + 1) {
        uint4* d = reinterpret_cast<uint4*>(out.ptr[p] + offset);
        if (d == src_) continue;
#pragma unroll
        for (int k = 0; k < kInFlight; ++k) {
          if (v + k * step_ >= nVec_) continue;
          if (evictFirst) {
            storeEvictFirst(d + v + k * step_, w_[k]);
          } else {
            d[v + k * step_] = w_[k];
          }
        }
      }
    }
    const char* src = reinterpret_cast<const char*>(src_);
    for (uint64_t i = nVec_ * 16 + threadIdx.x; i < bytes_; i += step_) {
      const char c = src[i];
      for (int p = 0; p < n; ++p) {
        char* d = out.ptr[p] + offset;
        if (d != src) d[i] = c;
      }
    }
  }

 private:
  __device__ __forceinline__ void load(uint64_t v) {
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      if (v + k * step_ < nVec_) w_[k] = src_[v + k * step_];
    }
  }
  const uint4* src_;
  uint64_t bytes_, nVec_, step_;
  uint4 w_[kInFlight];
};

template <int kInFlight>
__global__ void __launch_bounds__(kBlockThreads)
    zeroCopyAllGatherKernel(DeviceState s, const char* send, PeerBuffers out, uint64_t segBytes, Tiling tiling,
                            bool evictFirst) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  __shared__ BlockCounts counts;
  const int n = s.nRanks;
  const uint64_t begin = tiling.tileBegin(b, 0), end = tiling.tileEnd(b, 0);
  const uint64_t offset = s.rank * segBytes + begin;
  const bool vectors = allAligned16(out, n) && ((reinterpret_cast<uintptr_t>(send + begin) | offset) & 15) == 0;
  CopyToEvery16<kInFlight> copy(send + begin, vectors ? end - begin : 0);
  copy.prefetch();
  loadCounts(s, b, counts);
  const AllPeers peers{s.rank};
  barrier(s, b, counts, n - 1, peers, Tell::Arrival);
  if (vectors) {
    copy.run(out, offset, n, s.rank, evictFirst);
  } else {
    for (int t = 0; t < n; ++t) {
      const int p = (s.rank + t) % n;
      copyBytes(out.ptr[p] + offset, send + begin, end - begin);
    }
  }
  barrier(s, b, counts, n - 1, peers);
  storeCounts(s, b, counts);
}

/// One round of tiles of 16-byte multiples over at most maxBlocks blocks (or the call's tuned count,
/// where lower): a block covers its whole part between the two barriers, however large.
Tiling zeroCopyTiling(const DeviceState& s, uint64_t elems, uint32_t elemSize) {
  const uint32_t blocks =
      s.zeroCopyBlocks != 0 && s.zeroCopyBlocks < s.layout.maxBlocks ? s.zeroCopyBlocks : s.layout.maxBlocks;
  return makeTiling(elems, elemSize, blocks, ~uint64_t{0} / 2, kZeroCopyBytesPerBlock);
}

template <typename T, ReduceSpec::Kind Kind>
void runAllReduce(const DeviceState& s, const PeerBuffers& in, const PeerBuffers& out, uint64_t count,
                  const ReduceSpec& spec, cudaStream_t stream) {
  const uint64_t chunkElems = allReduceChunkElems(count, sizeof(T), s.nRanks);
  const Tiling tiling = zeroCopyTiling(s, chunkElems, sizeof(T));
  if (tiling.nBlocks == 0) return;
  launchKernel(zeroCopyAllReduceKernel<T, Kind>, dim3(tiling.nBlocks), dim3(kBlockThreads), 0, stream,
               s.dependentLaunch, s, in, out, count, chunkElems, tiling, spec);
}

template <typename T, ReduceSpec::Kind Kind>
void runReduceScatter(const DeviceState& s, const PeerBuffers& in, void* recv, uint64_t count, const ReduceSpec& spec,
                      cudaStream_t stream) {
  const Tiling tiling = zeroCopyTiling(s, count, sizeof(T));
  if (tiling.nBlocks == 0) return;
  launchKernel(zeroCopyReduceScatterKernel<T, Kind>, dim3(tiling.nBlocks), dim3(kBlockThreads), 0, stream,
               s.dependentLaunch, s, in, static_cast<T*>(recv), count, tiling, spec);
}

}  // namespace

void launchZeroCopyAllReduce(const DeviceState& s, const PeerBuffers& in, const PeerBuffers& out, uint64_t count,
                             DataType type, const ReduceSpec& op, cudaStream_t stream) {
  MSCCLPP_COLL_DISPATCH(runAllReduce, type, op.kind, s, in, out, count, op, stream);
}

void launchZeroCopyReduceScatter(const DeviceState& s, const PeerBuffers& in, void* recv, uint64_t count, DataType type,
                                 const ReduceSpec& op, cudaStream_t stream) {
  MSCCLPP_COLL_DISPATCH(runReduceScatter, type, op.kind, s, in, recv, count, op, stream);
}

void launchZeroCopyAllGather(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t segBytes,
                             cudaStream_t stream) {
  const Tiling tiling = zeroCopyTiling(s, segBytes, 1);
  if (tiling.nBlocks == 0) return;
  // Words in flight per thread: two where a tile is at most two words per thread, four above. Small
  // tiles ran faster with two, same run at 4 ranks in place (H100, 2026-12-08, docs/performance.md):
  // 256 KiB 4.87-4.93 us against 5.16-5.24, 1 MiB 5.38-5.49 against 5.62-5.64; at 4 MiB (32 KiB tiles)
  // both 7.9-8.1, and from 16 MiB four was faster (26.47 against 27.28).
  const bool small = tiling.tileElems <= 2 * 16 * kBlockThreads;
  launchKernel(small ? zeroCopyAllGatherKernel<2> : zeroCopyAllGatherKernel<4>, dim3(tiling.nBlocks),
               dim3(kBlockThreads), 0, stream, s.dependentLaunch, s, static_cast<const char*>(send), out, segBytes,
               tiling, segBytes >= kZeroCopyEvictFirstMinBytes);
}

}  // namespace collectives
}  // namespace mscclpp
