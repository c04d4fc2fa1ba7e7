// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// LL two-shot all-reduce, for messages above the one-shot sizes: rank r owns chunk r of the message.
// Shot A: every rank sends chunk p of its input, as LL16 packets read straight from the input, into
// rank p's scratch; rank r reduces chunk r from its own input and the n - 1 packet streams, in rank
// order. Shot B: rank r stores the reduced chunk into its output and sends it, as packets, to every
// peer, which copies it into its output. Each rank sends 2 (n - 1) / n of the message (as packets of
// twice its size) where one-shot sends n - 1 whole messages, and no barrier is needed: every packet
// carries its own flag.
//
// Why it is correct (ll_one_shot.cu gives the epoch scheme this builds on):
// - Every chunk has the same number of packets P (the last one padded with zero bytes that are never
//   stored), cut the same way over the blocks on every rank, so block b of every rank sends and
//   receives a non-empty part of every chunk in both shots.
// - A block takes two epochs per call: e for shot A and e + 1 for shot B, each writing half
//   epoch % 2 of its slots with the flag of its epoch. Writing half (e + 1) % 2 in shot B overwrites the
//   packets this block sent the peer in epoch e - 1, which the peer read in its previous kernel; this
//   block has just read the peer's shot-A packets, which the peer's block writes only after that kernel
//   ended. Writing half e % 2 in shot A overwrites epoch e - 2, read by the peer before it wrote its
//   epoch e - 1 packets (in shot A of its previous call, or its previous one-shot call), which this
//   block read before this kernel. A __syncthreads separates the shots, so that every read of shot A in
//   the block precedes every write of shot B.
// - In place: shot A reads chunk p of the input (for p != r only to send it, for chunk r to reduce it);
//   shot B writes chunk r (after the block's reads of it) and chunks q != r (which only this rank's
//   shot A read, before the __syncthreads). Different blocks touch different packets.
// - Bit-identical results: each element is reduced once, by its owner, in rank order; the other
//   ranks copy the bits. PreMulSum scales this rank's own input before it is sent or combined.

#include "ext/collectives/ll_packets.hpp"

namespace mscclpp {
namespace collectives {

namespace {

/// load8 and store8 for offsets that may lie past the message (the padding of the last chunk): zeros
/// are read there and nothing is stored.
__device__ __forceinline__ uint2 loadPadded(const char* base, uint64_t off, uint64_t len) {
  return off < len ? load8(base, off, len) : make_uint2(0, 0);
}
__device__ __forceinline__ void storeClipped(char* base, uint64_t off, uint64_t len, uint2 v) {
  if (off < len) store8(base, off, len, v);
}

/// pt cuts the P packets of one chunk over the blocks; `bytes` is the message.
template <typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    llTwoShotKernel(DeviceState s, const char* send, char* recv, uint64_t bytes, PacketTiling pt, ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  // As in ll_one_shot.cu, every thread reads the epoch; thread 0 stores the next one after the
  // __syncthreads between the shots, which every thread passes only after its read.
  const uint64_t epoch = s.llEpochs[b] + 1;
  const uint32_t halfA = static_cast<uint32_t>(epoch & 1), halfB = halfA ^ 1u;
  const uint32_t flagA = llFlag(epoch), flagB = llFlag(epoch + 1);
  const uint64_t begin = pt.begin(b), end = pt.end(b);
  const uint64_t chunkBytes = pt.packets * 8;
  const int rank = s.rank, n = s.nRanks;
  const Reducer<T, Kind> r(spec, n);

  // Shot A: my input's part of chunk p into p's slot for me.
  for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    sendToEveryPeer(
        s, halfA, b, i - begin, flagA, [&](int p) { return loadPadded(send, p * chunkBytes + i * 8, bytes); },
        [&](uint2 w) { return prepareWord<T, Kind, 8>(r, w); });
  }
  // Reduce my chunk's part in rank order; keep the result in the output and hand it to every peer.
  for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const uint64_t off = rank * chunkBytes + i * 8;
    // Loaded before the peers' packets are awaited (see ll_one_shot.cu).
    const uint2 mine = prepareWord<T, Kind, 8>(r, loadPadded(send, off, bytes));
    const uint2 y = reduceWithPeerPackets(s, r, halfA, b, i - begin, flagA, mine);
    // The stores of shot B come after every read of shot A in the block (see below), but this thread
    // may store its own element now: no other thread of any rank reads it.
    storeClipped(recv, off, bytes, y);
    sendToEveryPeer(
        s, halfB, b, i - begin, flagB, [&](int) { return y; }, [](uint2 w) { return w; });
  }
  // Shot B: the peers' reduced chunks into my output. In place, these bytes were read above (to be
  // sent in shot A) by other threads of this block: wait for all of them.
  __syncthreads();
  if (threadIdx.x == 0) s.llEpochs[b] = epoch + 1;
  for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    // This rank's own chunk was stored in the loop above.
    forEachRankWord(s, halfB, b, i - begin, flagB, make_uint2(0, 0), [&](int q, uint2 word) {
      if (q != rank) storeClipped(recv, q * chunkBytes + i * 8, bytes, word);
    });
  }
}

template <typename T, ReduceSpec::Kind Kind>
void runAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t bytes, const ReduceSpec& spec,
                  cudaStream_t stream) {
  const PacketTiling pt = twoShotTiling(bytes, s.nRanks, s.layout.maxBlocks);
  if (pt.nBlocks == 0) return;
  launchKernel(llTwoShotKernel<T, Kind>, dim3(pt.nBlocks), dim3(kBlockThreads), 0, stream, s.dependentLaunch, s,
               static_cast<const char*>(send), static_cast<char*>(recv), bytes, pt, spec);
}

}  // namespace

void launchLLTwoShotAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                              const ReduceSpec& op, cudaStream_t stream) {
  const uint64_t bytes = count * dataTypeSize(type);
  MSCCLPP_COLL_DISPATCH(runAllReduce, type, op.kind, s, send, recv, bytes, op, stream);
}

}  // namespace collectives
}  // namespace mscclpp
