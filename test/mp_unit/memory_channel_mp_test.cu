// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Memory channels between real processes: kernels of two ranks read and write each other's memory
// through CUDA IPC mappings, signal each other through MemoryDevice2DeviceSemaphores, and exchange LL
// packets. Ranks work in pairs; every check is made by the rank that owns the memory.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mscclpp/memory_channel.hpp>
#include <mscclpp/semaphore.hpp>
#include <string>
#include <vector>

#include "mp_unit/data_plane_util.hpp"

using namespace mscclpp;
using namespace mscclpp::test;

namespace {

// ---- put/get: one allocation per rank, three regions ----

// OUT holds what a rank sends (put source, get source of its peer); the peer puts into IN; get copies
// the peer's OUT into GOT. Regions start at multiples of 16 bytes.
constexpr uint64_t kRegion = (256ull << 20) + (64 << 10);
constexpr uint64_t kOut = 0;
constexpr uint64_t kIn = kRegion;
constexpr uint64_t kGot = 2 * kRegion;

uint32_t outSeed(int rank, int round) { return 0x51000u + 1009u * rank + 7u * round; }
uint32_t inBackground(int rank, int round) { return 0x52000u + 1013u * rank + 11u * round; }
uint32_t gotBackground(int rank, int round) { return 0x53000u + 1019u * rank + 13u * round; }

template <int Alignment, bool CopyRemainder>
__global__ void putAndGetKernel(MemoryChannelDeviceHandle channel, uint64_t bytes, uint64_t srcOffset,
                                uint64_t dstOffset) {
  const uint32_t threadId = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t numThreads = gridDim.x * blockDim.x;
  channel.put<Alignment, CopyRemainder>(kIn + dstOffset, kOut + srcOffset, bytes, threadId, numThreads);
  // get(targetOffset, originOffset): the target offset is the local destination, the origin offset the
  // peer's source (MSCCL++'s order, the reverse of put's).
  channel.get<Alignment, CopyRemainder>(kGot + dstOffset, kOut + srcOffset, bytes, threadId, numThreads);
}

struct CopyCase {
  int alignment;
  bool copyRemainder;
  uint64_t bytes;
  uint64_t srcOffset;
  uint64_t dstOffset;
  uint32_t blocks;
  uint32_t threads;
};

std::string describe(const CopyCase& c) {
  return "Alignment " + std::to_string(c.alignment) + (c.copyRemainder ? ", CopyRemainder" : ", no remainder") + ", " +
         std::to_string(c.bytes) + " bytes from offset " + std::to_string(c.srcOffset) + " to offset " +
         std::to_string(c.dstOffset) + ", " + std::to_string(c.blocks) + "x" + std::to_string(c.threads) + " threads";
}

void launchPutAndGet(const CopyCase& c, MemoryChannelDeviceHandle channel, cudaStream_t stream) {
  const dim3 grid(c.blocks), block(c.threads);
  const int which = c.alignment * 2 + (c.copyRemainder ? 1 : 0);
  switch (which) {
    case 4 * 2 + 1:
      putAndGetKernel<4, true><<<grid, block, 0, stream>>>(channel, c.bytes, c.srcOffset, c.dstOffset);
      break;
    case 4 * 2:
      putAndGetKernel<4, false><<<grid, block, 0, stream>>>(channel, c.bytes, c.srcOffset, c.dstOffset);
      break;
    case 8 * 2 + 1:
      putAndGetKernel<8, true><<<grid, block, 0, stream>>>(channel, c.bytes, c.srcOffset, c.dstOffset);
      break;
    case 8 * 2:
      putAndGetKernel<8, false><<<grid, block, 0, stream>>>(channel, c.bytes, c.srcOffset, c.dstOffset);
      break;
    case 16 * 2 + 1:
      putAndGetKernel<16, true><<<grid, block, 0, stream>>>(channel, c.bytes, c.srcOffset, c.dstOffset);
      break;
    case 16 * 2:
      putAndGetKernel<16, false><<<grid, block, 0, stream>>>(channel, c.bytes, c.srcOffset, c.dstOffset);
      break;
    default:
      throw std::runtime_error("no kernel for " + describe(c));
  }
  launched("putAndGetKernel");
}

/// The bytes of a copy of `bytes` to `dst` that copy<Alignment, CopyRemainder> writes, as [lo, hi)
/// relative to the start of the copy, from its documented contract: whole 4-byte words only; the
/// middle in Alignment-sized elements starting at the first Alignment-aligned destination address; the
/// words before it (head) and after the last whole element (tail) only with CopyRemainder; a copy
/// shorter than the head is all head.
struct Span {
  uint64_t lo;
  uint64_t hi;
};

Span bytesCopied(uintptr_t dst, uint64_t bytes, int alignment, bool copyRemainder) {
  const uint64_t words = bytes / 4;
  const uint64_t misalignment = dst % alignment;
  const uint64_t headWords = std::min<uint64_t>(misalignment == 0 ? 0 : (alignment - misalignment) / 4, words);
  const uint64_t wordsPerElement = alignment / 4;
  const uint64_t middleEnd = headWords + (words - headWords) / wordsPerElement * wordsPerElement;
  if (copyRemainder) return {0, words * 4};
  return {headWords * 4, middleEnd * 4};
}

// ---- read/write ----

__global__ void readAndWriteKernel(MemoryChannelDeviceHandle channel, uint64_t words, uint32_t seed) {
  const uint64_t threadId = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x;
  const uint64_t numThreads = uint64_t{gridDim.x} * blockDim.x;
  uint32_t* got = reinterpret_cast<uint32_t*>(static_cast<char*>(channel.src_) + kGot);
  for (uint64_t i = threadId; i < words; i += numThreads) {
    // The 8 pattern bytes at positions 8i..8i+7, little-endian: the peer checks its IN as a pattern.
    uint64_t value = 0;
    for (int b = 7; b >= 0; --b) value = (value << 8) | patternByte(seed, 8 * i + b);
    channel.write<uint64_t>(kIn / 8 + i, value);
    got[i] = channel.read<uint32_t>(kOut / 4 + i);
  }
}

// ---- packets ----

// A second, small allocation per rank: the payload to send, the packet buffer the peer writes into,
// and where received payloads are unpacked. Offsets are the least alignment each use allows.
constexpr uint64_t kPacketAllocation = 3 << 20;
constexpr uint64_t kData = 0, kDataOffset = 4;
constexpr uint64_t kPackets = 1 << 20, kPacketsOffset = 16;
constexpr uint64_t kUnpacked = 2 << 20, kUnpackedOffset = 8;

/// Every epoch, each side stamps its payload with the epoch's flag, sends it as packets into the
/// peer's packet buffer and unpacks what the peer sent into its own (the same buffer every epoch: only
/// the flag changes). Before overwriting the peer's buffer a side waits for the peer's signal that it
/// has unpacked the previous epoch, and signals the same after unpacking.
template <typename Packet>
__global__ void packetEpochsKernel(MemoryChannelDeviceHandle channel, uint64_t bytes, uint32_t firstFlag,
                                   uint32_t epochs, bool peerHasOlderEpoch, bool drain, uint32_t side,
                                   uint32_t peerSide, unsigned long long* errors) {
  uint32_t* data = reinterpret_cast<uint32_t*>(static_cast<char*>(channel.src_) + kData + kDataOffset);
  const uint32_t* unpacked =
      reinterpret_cast<const uint32_t*>(static_cast<char*>(channel.src_) + kUnpacked + kUnpackedOffset);
  const uint64_t words = bytes / 4;
  for (uint32_t e = 0; e < epochs; ++e) {
    const uint32_t flag = firstFlag + e;
    for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) data[i] = stamp(side, flag, i);
    __syncthreads();
    if (threadIdx.x == 0 && (e > 0 || peerHasOlderEpoch)) channel.wait(kDeviceSpinLimit);
    __syncthreads();
    channel.putPackets<Packet>(kPackets + kPacketsOffset, kData + kDataOffset, bytes, threadIdx.x, blockDim.x, flag);
    channel.unpackPackets<Packet>(kPackets + kPacketsOffset, kUnpacked + kUnpackedOffset, bytes, threadIdx.x,
                                  blockDim.x, flag, kDeviceSpinLimit);
    __syncthreads();
    for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
      if (unpacked[i] != stamp(peerSide, flag, i)) atomicAdd(errors, 1ULL);
    }
    __syncthreads();
    if (threadIdx.x == 0) channel.signal();
  }
  if (drain && threadIdx.x == 0) {
    channel.wait(kDeviceSpinLimit);
    if (channel.poll()) atomicAdd(errors + 1, 1ULL);
  }
}

// ---- put + signal / wait ----

constexpr uint64_t kSignalOut = 0;
constexpr uint64_t kSignalIn = 1 << 20;

/// Round r: one side stamps its OUT, puts it into the peer's IN with all threads and signals; the
/// other waits and checks every word of its IN, then answers the same way.
__global__ void putSignalPingPongKernel(MemoryChannelDeviceHandle channel, uint64_t bytes, uint32_t rounds,
                                        bool initiator, uint32_t side, uint32_t peerSide, unsigned long long* errors) {
  uint32_t* out = reinterpret_cast<uint32_t*>(static_cast<char*>(channel.src_) + kSignalOut);
  const uint32_t* in = reinterpret_cast<const uint32_t*>(static_cast<char*>(channel.src_) + kSignalIn);
  const uint64_t words = bytes / 4;
  auto send = [&](uint32_t r) {
    for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) out[i] = stamp(side, r, i);
    __syncthreads();
    channel.put(kSignalIn, kSignalOut, bytes, threadIdx.x, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) channel.signal();
  };
  auto receive = [&](uint32_t r) {
    if (threadIdx.x == 0) channel.wait(kDeviceSpinLimit);
    __syncthreads();
    for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
      if (in[i] != stamp(peerSide, r, i)) atomicAdd(errors, 1ULL);
    }
    __syncthreads();
  };
  for (uint32_t r = 1; r <= rounds; ++r) {
    if (initiator) {
      send(r);
      receive(r);
    } else {
      receive(r);
      send(r);
    }
  }
}

/// A pair's channel over one allocation per rank: registered for CudaIpc, exchanged, mapped.
struct ChannelPair {
  RegisteredMemory local;
  RegisteredMemory remote;
  std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore;
};

ChannelPair connectPair(Communicator& comm, int peer, void* buffer, size_t bytes) {
  ChannelPair pair;
  auto connection = comm.connect(Transport::CudaIpc, peer);
  pair.local = comm.registerMemory(buffer, bytes, Transport::CudaIpc);
  comm.sendMemory(pair.local, peer);
  pair.remote = comm.recvMemory(peer).get();
  pair.semaphore = std::make_shared<MemoryDevice2DeviceSemaphore>(comm, connection.get());
  return pair;
}

}  // namespace

class DataPlaneMemoryChannelTest : public DataPlaneMpTest {};

TEST_F(DataPlaneMemoryChannelTest, PutAndGetMoveExactlyTheDocumentedBytes) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  // Source and destination offsets agree modulo the alignment, as copy() requires; the rest varies.
  const std::vector<CopyCase> cases = {
      {16, true, 4, 0, 0, 1, 1},
      {16, true, 12, 4, 4, 1, 32},   // shorter than the head: all head
      {16, false, 12, 4, 4, 1, 32},  // ... so nothing is copied without the remainder
      {16, true, 4100, 8, 56, 1, 96},
      {16, false, 4100, 8, 56, 1, 96},
      {8, true, 1020, 4, 4, 1, 1},
      {8, false, 1020, 4, 12, 2, 64},
      {4, true, 4100, 12, 12, 1, 7},
      {4, false, 4100, 12, 8, 3, 5},
      {8, false, 4099, 8, 8, 1, 64},  // not a multiple of 4: the last 3 bytes stay behind
      {16, true, (1 << 20) + 12, 4, 20, 8, 256},
      {16, false, (1 << 20) + 12, 4, 20, 8, 256},
      {8, true, (16 << 20) + 4, 12, 4, 16, 512},
      {4, true, (64 << 20) + 4, 4, 8, 16, 256},
      {16, true, 256ull << 20, 0, 0, 32, 512},
      {16, true, (256ull << 20) - 4, 4, 4, 24, 1024},
  };
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& buffer = allocate(3 * kRegion);
    Communicator comm(bootstrap);
    ChannelPair pair = connectPair(comm, peer, buffer.get(), buffer.bytes());
    MemoryChannel channel(pair.semaphore, pair.remote, pair.local);
    const MemoryChannelDeviceHandle handle = channel.deviceHandle();
    ASSERT_EQ(handle.dst_, pair.remote.data());
    ASSERT_EQ(handle.src_, buffer.get());
    for (size_t c = 0; c < cases.size(); ++c) {
      const CopyCase& k = cases[c];
      SCOPED_TRACE(describe(k));
      // Only the part of each region a case can reach is filled and checked.
      const uint64_t window = std::min(kRegion, std::max(k.srcOffset, k.dstOffset) + k.bytes + 4096);
      fillPattern(buffer.get() + kOut, window, outSeed(rank, c), stream);
      fillPattern(buffer.get() + kIn, window, inBackground(rank, c), stream);
      fillPattern(buffer.get() + kGot, window, gotBackground(rank, c), stream);
      finish(stream, "filling the regions");
      bootstrap->barrier();
      launchPutAndGet(k, handle, stream);
      finish(stream, "putAndGetKernel");
      bootstrap->barrier();  // the peer's put into IN and its get from OUT are complete

      // The peer's put wrote this rank's IN through its mapping, whose address has the same alignment.
      const Span put = bytesCopied(reinterpret_cast<uintptr_t>(buffer.get() + kIn + k.dstOffset), k.bytes, k.alignment,
                                   k.copyRemainder);
      Mismatches bad = countUnexpected(
          buffer.get() + kIn, window,
          {k.dstOffset + put.lo, k.dstOffset + put.hi, outSeed(peer, c), k.srcOffset + put.lo, inBackground(rank, c)},
          stream);
      EXPECT_EQ(bad.count, 0u) << "put into this rank: first wrong byte at offset " << bad.first << " (expected ["
                               << k.dstOffset + put.lo << ", " << k.dstOffset + put.hi << ") copied)";
      const Span got = bytesCopied(reinterpret_cast<uintptr_t>(buffer.get() + kGot + k.dstOffset), k.bytes, k.alignment,
                                   k.copyRemainder);
      bad = countUnexpected(
          buffer.get() + kGot, window,
          {k.dstOffset + got.lo, k.dstOffset + got.hi, outSeed(peer, c), k.srcOffset + got.lo, gotBackground(rank, c)},
          stream);
      EXPECT_EQ(bad.count, 0u) << "get from the peer: first wrong byte at offset " << bad.first;
    }
  });
}

TEST_F(DataPlaneMemoryChannelTest, ReadAndWriteAccessThePeersElements) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  constexpr uint64_t kWords = (4 << 20) + 3;  // 32 MiB of u64 writes and 16 MiB of u32 reads
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& buffer = allocate(3 * kRegion);
    const uint64_t window = kWords * 8 + 4096;
    fillPattern(buffer.get() + kOut, window, outSeed(rank, 0), stream);
    fillPattern(buffer.get() + kIn, window, inBackground(rank, 0), stream);
    fillPattern(buffer.get() + kGot, window, gotBackground(rank, 0), stream);
    finish(stream, "filling the regions");
    Communicator comm(bootstrap);
    ChannelPair pair = connectPair(comm, peer, buffer.get(), buffer.bytes());
    MemoryChannel channel(pair.semaphore, pair.remote, pair.local);
    bootstrap->barrier();
    readAndWriteKernel<<<16, 256, 0, stream>>>(channel.deviceHandle(), kWords, outSeed(rank, 1));
    launched("readAndWriteKernel");
    finish(stream, "readAndWriteKernel");
    bootstrap->barrier();
    Mismatches bad = countUnexpected(buffer.get() + kIn, window,
                                     {0, kWords * 8, outSeed(peer, 1), 0, inBackground(rank, 0)}, stream);
    EXPECT_EQ(bad.count, 0u) << "write<uint64_t>: first wrong byte at offset " << bad.first;
    bad = countUnexpected(buffer.get() + kGot, window, {0, kWords * 4, outSeed(peer, 0), 0, gotBackground(rank, 0)},
                          stream);
    EXPECT_EQ(bad.count, 0u) << "read<uint32_t>: first wrong byte at offset " << bad.first;
  });
}

template <typename Packet>
void packetEpochs(DeviceMemory& buffer, std::shared_ptr<TcpBootstrap> bootstrap, int rank, int peer) {
  constexpr uint64_t kBytes = (8 << 10) + 8;
  constexpr uint32_t kEpochsPerLaunch = 1000;
  TestStream stream;
  DeviceMemory errors(2 * sizeof(unsigned long long));
  Communicator comm(bootstrap);
  ChannelPair pair = connectPair(comm, peer, buffer.get(), buffer.bytes());
  MemoryChannel channel(pair.semaphore, pair.remote, pair.local, buffer.get());
  ASSERT_EQ(channel.deviceHandle().packetBuffer_, buffer.get());
  bootstrap->barrier();
  // Two launches with different thread counts; the second continues the flags of the first on the
  // same, never cleared, packet buffer.
  auto* errorCounts = errors.as<unsigned long long>();
  packetEpochsKernel<Packet><<<1, 256, 0, stream>>>(channel.deviceHandle(), kBytes, 1, kEpochsPerLaunch, false, false,
                                                    rank, peer, errorCounts);
  launched("packetEpochsKernel");
  packetEpochsKernel<Packet><<<1, 96, 0, stream>>>(channel.deviceHandle(), kBytes, 1 + kEpochsPerLaunch,
                                                   kEpochsPerLaunch, true, true, rank, peer, errorCounts);
  launched("packetEpochsKernel");
  finish(stream, "packetEpochsKernel");
  std::vector<unsigned long long> counts = toHost<unsigned long long>(errors.get(), 2, stream);
  EXPECT_EQ(counts[0], 0u) << "payload words that differed from what the peer sent in that epoch";
  EXPECT_EQ(counts[1], 0u) << "a signal was left over after the last epoch";
  bootstrap->barrier();
}

TEST_F(DataPlaneMemoryChannelTest, LL16PacketsReuseOneBufferAcrossManyEpochs) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    packetEpochs<LL16Packet>(allocate(kPacketAllocation), bootstrap, rank, peer);
  });
}

TEST_F(DataPlaneMemoryChannelTest, LL8PacketsReuseOneBufferAcrossManyEpochs) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    packetEpochs<LL8Packet>(allocate(kPacketAllocation), bootstrap, rank, peer);
  });
}

TEST_F(DataPlaneMemoryChannelTest, DataPutBeforeSignalIsVisibleAfterWait) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  constexpr uint64_t kBytes = (256 << 10) + 16;
  constexpr uint32_t kRounds = 300;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& buffer = allocate(2 << 20);
    DeviceMemory& errors = allocate(sizeof(unsigned long long));
    Communicator comm(bootstrap);
    ChannelPair pair = connectPair(comm, peer, buffer.get(), buffer.bytes());
    MemoryChannel channel(pair.semaphore, pair.remote, pair.local);
    bootstrap->barrier();
    putSignalPingPongKernel<<<1, 512, 0, stream>>>(channel.deviceHandle(), kBytes, kRounds, initiator, rank, peer,
                                                   errors.as<unsigned long long>());
    launched("putSignalPingPongKernel");
    finish(stream, "putSignalPingPongKernel");
    EXPECT_EQ(wordToHost(errors.as<unsigned long long>(), stream), 0u)
        << "words that were not yet visible after wait() although put() before signal() wrote them";
    bootstrap->barrier();
  });
}

TEST_F(DataPlaneMemoryChannelTest, ChannelToMemoryNotRegisteredForCudaIpcIsRefused) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    DeviceMemory& buffer = allocate(4096);
    Communicator comm(bootstrap);
    auto connection = comm.connect(Transport::CudaIpc, peer);
    RegisteredMemory local = comm.registerMemory(buffer.get(), 4096, Transport::CudaIpc);
    RegisteredMemory ethernetOnly = comm.registerMemory(buffer.get(), 4096, Transport::Ethernet);
    comm.sendMemory(ethernetOnly, peer);
    RegisteredMemory remoteEthernetOnly = comm.recvMemory(peer).get();
    auto semaphore = std::make_shared<MemoryDevice2DeviceSemaphore>(comm, connection.get());
    expectInvalidUsage([&] { MemoryChannel refused(semaphore, remoteEthernetOnly, local); },
                       "MemoryChannel to the peer's memory registered for Ethernet only");
    expectInvalidUsage([&] { MemoryChannel().deviceHandle(); }, "deviceHandle() of an empty MemoryChannel");
  });
}
