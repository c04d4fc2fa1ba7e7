// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// LL one-shot, all pairs: every rank writes its segment for each peer straight into that peer's
// scratch as LL16 packets (8 bytes of data and two copies of a flag in one 16-byte store), and reads
// the packets its peers wrote into its own scratch, spinning on each packet's flag. One hop across
// the ranks, no barrier, no proxy, nothing on the host: this is the latency floor for small messages
// (one flag hop plus the packet writes). Used for all-reduce, reduce-scatter, all-gather and
// all-to-all, whose every call moves data both ways between every pair.
//
// Epochs. Block b keeps its own count of the LL calls it took part in (llEpochs[b], device memory);
// call e writes into half e % 2 of the block's slots with a flag derived from e. A packet of an older
// call never carries the flag of e (the flags of e and e - 2 differ), so no slot is ever cleared.
// Why writing half e % 2 in call e cannot overwrite packets a peer has not read yet: those were
// written in call e - 2; block b of this rank finished call e - 1, so it read the peer's block b
// packets of call e - 1, which that peer's kernel wrote only after its kernel of call e - 2, and with
// it the reads of our e - 2 packets, had completed (same stream, kernels in order). Every block that
// takes part has at least one packet, and every rank computes the same blocks (tiling.hpp).
//
// Reductions combine the n inputs of an element in rank order on every rank, so all ranks produce
// bit-identical results. With PreMulSum each rank scales its own input before it writes the packets
// and before it combines it, so every rank combines the same scaled values.

#include "ext/collectives/ll_packets.hpp"

namespace mscclpp {
namespace collectives {

namespace {

enum class LLMode { AllReduce, ReduceScatter, AllGather, AllToAll };

/// One kernel for the four modes. segBytes is the per-peer segment; for the segment rank p gets from
/// this rank: AllReduce/AllGather send the whole input, ReduceScatter/AllToAll their p-th part.
template <LLMode Mode, typename T, ReduceSpec::Kind Kind>
__global__ void __launch_bounds__(kBlockThreads)
    llKernel(DeviceState s, const char* send, char* recv, uint64_t segBytes, PacketTiling pt, ReduceSpec spec) {
  waitForPriorKernels();
  const uint32_t b = blockIdx.x;
  // Every thread reads the block's epoch itself, so that this read overlaps the loads of its first
  // words instead of preceding them behind a __syncthreads; thread 0 stores the next one at the end,
  // after a __syncthreads, when no thread of the block can still read the old value.
  const uint64_t epoch = s.llEpochs[b] + 1;
  const uint32_t half = static_cast<uint32_t>(epoch & 1);
  const uint32_t flag = llFlag(epoch);
  const uint64_t begin = pt.begin(b), end = pt.end(b);
  const int rank = s.rank, n = s.nRanks;
  constexpr bool kPerPeerSegment = Mode == LLMode::ReduceScatter || Mode == LLMode::AllToAll;
  // Only the reductions may pre-multiply (PreMulSum); the copies compile without it.
  constexpr bool kReduces = Mode == LLMode::AllReduce || Mode == LLMode::ReduceScatter;
  const Reducer<T, Kind> r(kReduces ? spec : ReduceSpec{}, n);
  auto prepared = [&](uint2 w) { return kReduces ? prepareWord<T, Kind, 8>(r, w) : w; };

  // The sends stay a loop per peer rather than ll_packets.hpp's sendToEveryPeer: through it, ptxas
  // gives the reduce-scatter kernels 64 registers instead of 80 and they spill.
  for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    if (kPerPeerSegment) {
      for (int t = 0; t < n - 1; ++t) {
        const int p = t < rank ? t : t + 1;
        const uint2 w = prepared(load8(send + p * segBytes, i * 8, segBytes));
        LL16Packet* slot = reinterpret_cast<LL16Packet*>(s.scratch[p] + s.layout.llSlot(half, b, rank));
        slot[i - begin].write(w.x, w.y, flag);
      }
    } else {
      const uint2 w = prepared(load8(send, i * 8, segBytes));
      for (int t = 0; t < n - 1; ++t) {
        const int p = t < rank ? t : t + 1;
        LL16Packet* slot = reinterpret_cast<LL16Packet*>(s.scratch[p] + s.layout.llSlot(half, b, rank));
        slot[i - begin].write(w.x, w.y, flag);
      }
    }
  }

  // This rank's own word is loaded before the peers' packets are awaited, and used after, so that its
  // latency hides behind theirs.
  const char* own = kPerPeerSegment ? send + rank * segBytes : send;
  if (Mode == LLMode::AllReduce || Mode == LLMode::ReduceScatter) {
    for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const uint2 mine = prepareWord<T, Kind, 8>(r, load8(own, i * 8, segBytes));
      store8(recv, i * 8, segBytes, reduceWithPeerPackets(s, r, half, b, i - begin, flag, mine));
    }
  } else {
    const bool ownInPlace = own == recv + rank * segBytes;
    for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const uint2 mine = ownInPlace ? make_uint2(0, 0) : load8(own, i * 8, segBytes);
      forEachRankWord(s, half, b, i - begin, flag, mine, [&](int q, uint2 word) {
        if (q != rank) store8(recv + q * segBytes, i * 8, segBytes, word);
      });
      if (!ownInPlace) store8(recv + rank * segBytes, i * 8, segBytes, mine);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) s.llEpochs[b] = epoch;
}

template <LLMode Mode>
struct LLLaunch {
  template <typename T, ReduceSpec::Kind Kind>
  static void run(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, const ReduceSpec& spec,
                  cudaStream_t stream) {
    const PacketTiling pt = makePacketTiling(segBytes, s.layout.maxBlocks, kLLPacketsPerBlock);
    if (pt.nBlocks == 0) return;
    launchKernel(llKernel<Mode, T, Kind>, dim3(pt.nBlocks), dim3(kBlockThreads), 0, stream, s.dependentLaunch, s,
                 static_cast<const char*>(send), static_cast<char*>(recv), segBytes, pt, spec);
  }
};

template <typename T, ReduceSpec::Kind Kind>
void runAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, const ReduceSpec& spec,
                  cudaStream_t stream) {
  LLLaunch<LLMode::AllReduce>::run<T, Kind>(s, send, recv, segBytes, spec, stream);
}

template <typename T, ReduceSpec::Kind Kind>
void runReduceScatter(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, const ReduceSpec& spec,
                      cudaStream_t stream) {
  LLLaunch<LLMode::ReduceScatter>::run<T, Kind>(s, send, recv, segBytes, spec, stream);
}

}  // namespace

void launchLLAllReduce(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                       const ReduceSpec& op, cudaStream_t stream) {
  const uint64_t segBytes = count * dataTypeSize(type);
  MSCCLPP_COLL_DISPATCH(runAllReduce, type, op.kind, s, send, recv, segBytes, op, stream);
}

void launchLLReduceScatter(const DeviceState& s, const void* send, void* recv, uint64_t count, DataType type,
                           const ReduceSpec& op, cudaStream_t stream) {
  const uint64_t segBytes = count * dataTypeSize(type);
  MSCCLPP_COLL_DISPATCH(runReduceScatter, type, op.kind, s, send, recv, segBytes, op, stream);
}

void launchLLAllGather(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, cudaStream_t stream) {
  LLLaunch<LLMode::AllGather>::run<uint8_t, ReduceSpec::Kind::Sum>(s, send, recv, segBytes, ReduceSpec{}, stream);
}

void launchLLAllToAll(const DeviceState& s, const void* send, void* recv, uint64_t segBytes, cudaStream_t stream) {
  LLLaunch<LLMode::AllToAll>::run<uint8_t, ReduceSpec::Kind::Sum>(s, send, recv, segBytes, ReduceSpec{}, stream);
}

}  // namespace collectives
}  // namespace mscclpp
