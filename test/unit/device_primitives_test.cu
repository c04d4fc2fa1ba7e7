// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// LL packets, packet copies and atomics on one GPU: one block plays the writer, another the reader,
// and buffers are reused across flag epochs exactly as a peer GPU would reuse them.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/copy_device.hpp>
#include <mscclpp/packet_device.hpp>
#include <mscclpp/poll_device.hpp>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;
using mscclpp::devtest::MappedHostBuffer;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;

__host__ __device__ uint32_t payloadWord(uint32_t epoch, uint64_t index, uint32_t lane) {
  return (epoch * 2654435761u) ^ (static_cast<uint32_t>(index) * 40503u) ^ (lane * 0x9e3779b9u);
}

// Each epoch: block 0 writes every packet with flag `epoch`, block 1 reads them all; the writer waits
// for the reader's acknowledgement of the previous epoch before overwriting the same buffer.
template <typename Packet>
__global__ void packetEpochsKernel(Packet* packets, uint64_t numPackets, uint32_t epochs, uint64_t* ack,
                                   uint32_t* errors) {
  for (uint32_t epoch = 1; epoch <= epochs; ++epoch) {
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0) {
        POLL_MAYBE_JAILBREAK((atomicLoad<uint64_t, scopeDevice>(ack, memoryOrderAcquire) + 1 < epoch), kTestSpinLimit);
      }
      __syncthreads();
      for (uint64_t i = threadIdx.x; i < numPackets; i += blockDim.x) {
        if constexpr (sizeof(Packet) == 16) {
          packets[i].write(payloadWord(epoch, i, 0), payloadWord(epoch, i, 1), epoch);
        } else {
          packets[i].write(payloadWord(epoch, i, 0), epoch);
        }
      }
    } else {
      for (uint64_t i = threadIdx.x; i < numPackets; i += blockDim.x) {
        if constexpr (sizeof(Packet) == 16) {
          const uint2 got = packets[i].read(epoch, kTestSpinLimit);
          if (got.x != payloadWord(epoch, i, 0) || got.y != payloadWord(epoch, i, 1)) atomicAdd(errors, 1u);
        } else {
          const uint32_t got = packets[i].read(epoch, kTestSpinLimit);
          if (got != payloadWord(epoch, i, 0)) atomicAdd(errors, 1u);
        }
      }
      __syncthreads();
      if (threadIdx.x == 0) atomicStore<uint64_t, scopeDevice>(ack, uint64_t{epoch}, memoryOrderRelease);
    }
  }
}

template <typename Packet>
void runPacketEpochs() {
  constexpr uint64_t kPackets = 4096;
  constexpr uint32_t kEpochs = 50;
  DeviceBuffer<Packet> packets(kPackets);
  DeviceBuffer<uint64_t> ack(1);
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(packets.ok() && ack.ok() && errors.ok());
  packetEpochsKernel<Packet><<<2, 256>>>(packets.get(), kPackets, kEpochs, ack.get(), errors.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(errors.toHost()[0], 0u) << "payloads read under the wrong epoch";
  std::vector<Packet> last = packets.toHost();
  ASSERT_EQ(last.size(), kPackets);
  for (uint64_t i = 0; i < kPackets; ++i) {
    if constexpr (sizeof(Packet) == 16) {
      ASSERT_EQ(last[i].flag1, kEpochs) << i;
      ASSERT_EQ(last[i].flag2, kEpochs) << i;
      ASSERT_EQ(last[i].data1, payloadWord(kEpochs, i, 0)) << i;
      ASSERT_EQ(last[i].data2, payloadWord(kEpochs, i, 1)) << i;
    } else {
      ASSERT_EQ(last[i].flag, kEpochs) << i;
      ASSERT_EQ(last[i].data, payloadWord(kEpochs, i, 0)) << i;
    }
  }
}

// One thread walks a packet through its states; results[k] records each observation.
__global__ void packetStatesKernel(LL16Packet* p16, LL8Packet* p8, uint32_t* results) {
  uint2 data = make_uint2(0, 0);
  p16->write(0xaaaa0001u, 0xbbbb0002u, 7);
  results[0] = p16->readOnce(8, data);  // another epoch: not ready
  results[1] = p16->readOnce(7, data);  // ready
  results[2] = data.x;
  results[3] = data.y;
  p16->write(uint64_t{0x1111222233334444ull}, 9);
  const uint2 v = p16->read(9);
  results[4] = v.x;  // low word first
  results[5] = v.y;
  p16->clear();
  results[6] = p16->readOnce(9, data);

  uint32_t d8 = 0;
  p8->write(0xcafe0003u, 5);
  results[7] = p8->readOnce(6, d8);
  results[8] = p8->readOnce(5, d8);
  results[9] = d8;
  results[10] = p8->read(5);
  p8->clear();
  results[11] = p8->readOnce(5, d8);
}

// Each epoch: block 0 packs a fresh slice of `origin` into the one packet buffer, block 1 unpacks it
// into its own slice of `unpacked`. Slices start `stride` bytes apart (a multiple of 16).
template <typename Packet>
__global__ void packetCopyKernel(Packet* packets, const char* origin, char* unpacked, uint64_t bytesPerEpoch,
                                 uint64_t stride, uint32_t epochs, uint64_t* ack) {
  for (uint32_t epoch = 1; epoch <= epochs; ++epoch) {
    const uint64_t slice = (epoch - 1) * stride;
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0) {
        POLL_MAYBE_JAILBREAK((atomicLoad<uint64_t, scopeDevice>(ack, memoryOrderAcquire) + 1 < epoch), kTestSpinLimit);
      }
      __syncthreads();
      copyToPackets<Packet>(packets, origin + slice, bytesPerEpoch, threadIdx.x, blockDim.x, epoch);
    } else {
      copyFromPackets<Packet>(unpacked + slice, packets, bytesPerEpoch, threadIdx.x, blockDim.x, epoch, kTestSpinLimit);
      __syncthreads();
      if (threadIdx.x == 0) atomicStore<uint64_t, scopeDevice>(ack, uint64_t{epoch}, memoryOrderRelease);
    }
  }
}

template <typename Packet>
void runPacketCopyRoundTrip(uint64_t bytesPerEpoch, uint64_t payloadBytes) {
  constexpr uint32_t kEpochs = 8;
  const uint64_t stride = (bytesPerEpoch + 15) / 16 * 16;
  const uint64_t total = stride * kEpochs;
  DeviceBuffer<Packet> packets(bytesPerEpoch / payloadBytes + 1);
  DeviceBuffer<char> origin(total);
  DeviceBuffer<char> unpacked(total);
  DeviceBuffer<uint64_t> ack(1);
  ASSERT_TRUE(packets.ok() && origin.ok() && unpacked.ok() && ack.ok());
  std::vector<char> src(total);
  for (uint64_t i = 0; i < total; ++i) src[i] = static_cast<char>((i * 131 + 17) & 0xff);
  ASSERT_TRUE(origin.fromHost(src));
  MSCCLPP_TEST_CUDA(cudaMemset(unpacked.get(), 0x5a, total));
  packetCopyKernel<Packet>
      <<<2, 128>>>(packets.get(), origin.get(), unpacked.get(), bytesPerEpoch, stride, kEpochs, ack.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<char> got = unpacked.toHost();
  ASSERT_EQ(got.size(), total);
  const uint64_t carried = bytesPerEpoch / payloadBytes * payloadBytes;
  for (uint32_t e = 0; e < kEpochs; ++e) {
    for (uint64_t i = 0; i < stride; ++i) {
      const uint64_t at = e * stride + i;
      const char want = i < carried ? src[at] : static_cast<char>(0x5a);
      ASSERT_EQ(got[at], want) << "epoch " << e + 1 << " byte " << i << (i < carried ? "" : " (beyond the payloads)");
    }
  }
}

__global__ void fetchAddKernel(uint32_t* counter, uint32_t* seen) {
  const uint32_t old = atomicFetchAdd<uint32_t, scopeDevice>(counter, 1u, memoryOrderRelaxed);
  atomicFetchAdd<uint32_t, scopeDevice>(&seen[old], 1u, memoryOrderRelaxed);
}

// Block 0 publishes plain writes with a release store; block 1 acquires the flag and must see them.
__global__ void releaseAcquireKernel(uint32_t* data, uint32_t* flag, uint32_t rounds, uint32_t* errors) {
  constexpr uint32_t kWords = 64;
  for (uint32_t r = 1; r <= rounds; ++r) {
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0) {
        POLL_MAYBE_JAILBREAK((atomicLoad<uint32_t, scopeDevice>(&flag[1], memoryOrderAcquire) + 1 < r), kTestSpinLimit);
        for (uint32_t i = 0; i < kWords; ++i) data[i] = r * 1000 + i;
        atomicStore<uint32_t, scopeDevice>(&flag[0], r, memoryOrderRelease);
      }
    } else if (threadIdx.x == 0) {
      POLL_MAYBE_JAILBREAK((atomicLoad<uint32_t, scopeDevice>(&flag[0], memoryOrderAcquire) < r), kTestSpinLimit);
      for (uint32_t i = 0; i < kWords; ++i) {
        if (data[i] != r * 1000 + i) atomicAdd(errors, 1u);
      }
      atomicStore<uint32_t, scopeDevice>(&flag[1], r, memoryOrderRelease);
    }
  }
}

__global__ void systemStoreKernel(uint64_t* hostWord, uint64_t value) {
  atomicStore<uint64_t, scopeSystem>(hostWord, value, memoryOrderRelease);
}

}  // namespace

TEST(DevicePacketTest, LL16ReadOnceIsTrueUntilTheFlagMatches) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<LL16Packet> p16(1);
  DeviceBuffer<LL8Packet> p8(1);
  DeviceBuffer<uint32_t> results(12);
  ASSERT_TRUE(p16.ok() && p8.ok() && results.ok());
  packetStatesKernel<<<1, 1>>>(p16.get(), p8.get(), results.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint32_t> r = results.toHost();
  ASSERT_EQ(r.size(), 12u);
  EXPECT_EQ(r[0], 1u) << "LL16 under another flag is not ready";
  EXPECT_EQ(r[1], 0u) << "LL16 under its flag is ready";
  EXPECT_EQ(r[2], 0xaaaa0001u);
  EXPECT_EQ(r[3], 0xbbbb0002u);
  EXPECT_EQ(r[4], 0x33334444u) << "write(uint64_t) puts the low word in data1";
  EXPECT_EQ(r[5], 0x11112222u);
  EXPECT_EQ(r[6], 1u) << "a cleared LL16 packet is not ready";
  EXPECT_EQ(r[7], 1u) << "LL8 under another flag is not ready";
  EXPECT_EQ(r[8], 0u) << "LL8 under its flag is ready";
  EXPECT_EQ(r[9], 0xcafe0003u);
  EXPECT_EQ(r[10], 0xcafe0003u);
  EXPECT_EQ(r[11], 1u) << "a cleared LL8 packet is not ready";
}

TEST(DevicePacketTest, LL16PacketsCrossBlocksOverManyEpochsInOneBuffer) {
  MSCCLPP_REQUIRE_GPU();
  runPacketEpochs<LL16Packet>();
}

TEST(DevicePacketTest, LL8PacketsCrossBlocksOverManyEpochsInOneBuffer) {
  MSCCLPP_REQUIRE_GPU();
  runPacketEpochs<LL8Packet>();
}

TEST(DevicePacketTest, CopyToAndFromLL16PacketsRoundTripsAcrossEpochs) {
  MSCCLPP_REQUIRE_GPU();
  runPacketCopyRoundTrip<LL16Packet>(8 * 1000, 8);
}

TEST(DevicePacketTest, CopyToAndFromLL8PacketsRoundTripsAcrossEpochs) {
  MSCCLPP_REQUIRE_GPU();
  runPacketCopyRoundTrip<LL8Packet>(4 * 1001, 4);
}

TEST(DevicePacketTest, CopyToPacketsLeavesARemainderBelowOnePayloadUnsent) {
  MSCCLPP_REQUIRE_GPU();
  runPacketCopyRoundTrip<LL16Packet>(8 * 100 + 4, 8);
}

TEST(DeviceAtomicTest, FetchAddHandsOutEveryValueExactlyOnce) {
  MSCCLPP_REQUIRE_GPU();
  constexpr int kBlocks = 64;
  constexpr int kThreads = 256;
  constexpr uint32_t kTotal = kBlocks * kThreads;
  DeviceBuffer<uint32_t> counter(1);
  DeviceBuffer<uint32_t> seen(kTotal);
  ASSERT_TRUE(counter.ok() && seen.ok());
  fetchAddKernel<<<kBlocks, kThreads>>>(counter.get(), seen.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(counter.toHost()[0], kTotal);
  const std::vector<uint32_t> s = seen.toHost();
  for (uint32_t i = 0; i < kTotal; ++i) ASSERT_EQ(s[i], 1u) << "value " << i;
}

TEST(DeviceAtomicTest, ReleaseStorePublishesPlainWritesToAnAcquireLoad) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<uint32_t> data(64);
  DeviceBuffer<uint32_t> flags(2);
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(data.ok() && flags.ok() && errors.ok());
  releaseAcquireKernel<<<2, 32>>>(data.get(), flags.get(), 2000, errors.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(errors.toHost()[0], 0u);
}

TEST(DeviceAtomicTest, SystemScopeStoreReachesMappedHostMemory) {
  MSCCLPP_REQUIRE_GPU();
  MappedHostBuffer<uint64_t> word(1);
  ASSERT_TRUE(word.ok());
  systemStoreKernel<<<1, 1>>>(word.device(), 0x0123456789abcdefull);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(atomicLoad(word.host(), memoryOrderAcquire), 0x0123456789abcdefull);
}
