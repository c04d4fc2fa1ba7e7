// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Copy-engine collectives on registered receive buffers: all-gather, broadcast and all-to-all move
// their data with cudaMemcpyAsync on the caller's stream, from this rank's buffer straight into the
// peers' registered buffers through the mappings registration made, so the copy engines carry every
// byte and no SM does. Two one-block barrier kernels frame the copies.
//
// Why it is correct:
// - The first barrier (block 0 of every rank meets block 0 of every peer, device_common.hpp) proves
//   that every peer's stream reached this call: the peer's receive buffer is free, and this rank's
//   input is ready. It tells only the arrival (Tell::Arrival, as the zero-copy kernels' first barrier,
//   zero_copy.cu says why). The copies follow it in stream order.
// - The second barrier starts on a rank only after its copies have completed (stream order), so when
//   it passes, every peer has finished writing this rank's output, and the call ends with the output
//   final. The barrier's release/acquire (device_common.hpp: device scope for a peer on this GPU, system
//   scope otherwise) orders it after the copies' completion.
// - The barrier counts of block 0 advance by two on both sides of every pair, as every other kernel
//   keeps them consistent; nothing here uses scratch slots or LL epochs.
// - In place: an all-gather's rank r writes slot r of every output, which only rank r's input (its own
//   slot) is read from; a broadcast's root skips its own output. All-to-all runs out of place only
//   (collectives.cc checks): in place, a rank would overwrite the part of a peer's buffer that the
//   peer is still sending.
// - Everything is stream-ordered device work with its counts in device memory, so a captured graph
//   replays it correctly any number of times.

#include "ext/collectives/device_common.hpp"

namespace mscclpp {
namespace collectives {

namespace {

constexpr int kBarrierThreads = 64;

__global__ void __launch_bounds__(kBarrierThreads) barrierKernel(DeviceState s, Tell tell) {
  waitForPriorKernels();
  __shared__ BlockCounts counts;
  loadCounts(s, 0, counts);
  barrier(s, 0, counts, s.nRanks - 1, AllPeers{s.rank}, tell);
  storeCounts(s, 0, counts);
}

void launchBarrier(const DeviceState& s, Tell tell, cudaStream_t stream) {
  launchKernel(barrierKernel, dim3(1), dim3(kBarrierThreads), 0, stream, s.dependentLaunch, s, tell);
}

void copy(void* dst, const void* src, uint64_t bytes, cudaStream_t stream) {
  if (bytes == 0 || dst == src) return;
  MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

void launchCopyEngineAllGather(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t segBytes,
                               cudaStream_t stream) {
  launchBarrier(s, Tell::Arrival, stream);
  // Starting with a different peer on every rank spreads the copies over the links.
  for (int t = 0; t < s.nRanks; ++t) {
    const int p = (s.rank + t) % s.nRanks;
    copy(out.ptr[p] + s.rank * segBytes, send, segBytes, stream);
  }
  launchBarrier(s, Tell::Accesses, stream);
}

void launchCopyEngineBroadcast(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t bytes, int root,
                               cudaStream_t stream) {
  launchBarrier(s, Tell::Arrival, stream);
  if (s.rank == root) {
    for (int t = 0; t < s.nRanks; ++t) copy(out.ptr[(s.rank + t) % s.nRanks], send, bytes, stream);
  }
  launchBarrier(s, Tell::Accesses, stream);
}

void launchCopyEngineAllToAll(const DeviceState& s, const void* send, const PeerBuffers& out, uint64_t segBytes,
                              cudaStream_t stream) {
  launchBarrier(s, Tell::Arrival, stream);
  const char* in = static_cast<const char*>(send);
  for (int t = 0; t < s.nRanks; ++t) {
    const int p = (s.rank + t) % s.nRanks;
    copy(out.ptr[p] + s.rank * segBytes, in + p * segBytes, segBytes, stream);
  }
  launchBarrier(s, Tell::Accesses, stream);
}

}  // namespace collectives
}  // namespace mscclpp
