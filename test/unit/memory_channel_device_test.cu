// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Memory channel handles in loopback: the "peer's" buffers are other buffers of the same GPU, and two
// blocks play the two sides.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <mscclpp/memory_channel_device.hpp>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;

__global__ void copyMethodsKernel(MemoryChannelDeviceHandle channel, uint64_t* readBack) {
  channel.put<16>(64, 128, 4000, threadIdx.x, blockDim.x);
  channel.put<8, false>(8192, 1024, threadIdx.x, blockDim.x);
  channel.get<4>(4096, 12288, 1020, threadIdx.x, blockDim.x);
  channel.get(16384, 2048, threadIdx.x, blockDim.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    channel.write<uint32_t>(20000 / 4, 0xabcdef01u);
    readBack[0] = channel.read<uint64_t>(64 / 8);
  }
}

// Block 0 is side A, block 1 side B. A puts `bytes` and signals; B waits and checks. Then A sends the
// same bytes as packets into B's packet buffer; B unpacks them into `unpacked`.
__global__ void twoSidesKernel(MemoryChannelDeviceHandle a, MemoryChannelDeviceHandle b, MemoryChannelDeviceHandle aLL,
                               MemoryChannelDeviceHandle bLL, uint64_t bytes, uint32_t* errors) {
  if (blockIdx.x == 0) {
    a.put(0, bytes, threadIdx.x, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) a.signal();
    aLL.putPackets(0, 0, bytes, threadIdx.x, blockDim.x, 1);
    if (threadIdx.x == 0) {
      a.relaxedWait(kTestSpinLimit);
      if (a.poll()) atomicAdd(errors, 1u);
    }
  } else {
    if (threadIdx.x == 0) b.wait(kTestSpinLimit);
    __syncthreads();
    const uint32_t* sent = static_cast<const uint32_t*>(a.src_);
    const uint32_t* arrived = static_cast<const uint32_t*>(b.src_);
    for (uint64_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
      if (arrived[i] != sent[i]) atomicAdd(errors, 1u);
    }
    bLL.unpackPackets(0, 0, bytes, threadIdx.x, blockDim.x, 1, kTestSpinLimit);
    if (threadIdx.x == 0) {
      const uint2 third = bLL.unpackPacket(3, 1, kTestSpinLimit);
      if (third.x != sent[6] || third.y != sent[7]) atomicAdd(errors, 1u);
      b.relaxedSignal();
    }
  }
}

__global__ void getKernel(MemoryChannelDeviceHandle channel, uint64_t targetOffset, uint64_t originOffset,
                          uint64_t bytes) {
  channel.get(targetOffset, originOffset, bytes, threadIdx.x, blockDim.x);
}

}  // namespace

// MSCCL++'s get(targetOffset, originOffset, ...) reads the peer's memory at originOffset and writes
// local memory at targetOffset; with two different offsets, the other reading would touch other bytes.
TEST(DeviceMemoryChannelTest, GetReadsThePeerAtOriginOffsetAndWritesLocalAtTargetOffset) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint64_t kBytes = 8192;
  constexpr uint64_t kTargetOffset = 256;
  constexpr uint64_t kOriginOffset = 4096;
  constexpr uint64_t kCopyBytes = 1024;
  DeviceBuffer<char> remote(kBytes);
  DeviceBuffer<char> local(kBytes);
  ASSERT_TRUE(remote.ok() && local.ok());
  std::vector<char> remoteInit(kBytes), localInit(kBytes);
  for (uint64_t i = 0; i < kBytes; ++i) {
    remoteInit[i] = static_cast<char>((i * 5 + 3) & 0xff);
    localInit[i] = static_cast<char>((i * 11 + 7) & 0xff);
  }
  ASSERT_TRUE(remote.fromHost(remoteInit) && local.fromHost(localInit));
  MemoryChannelDeviceHandle channel({}, remote.get(), local.get(), nullptr);
  getKernel<<<1, 128>>>(channel, kTargetOffset, kOriginOffset, kCopyBytes);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());

  std::vector<char> wantLocal = localInit;
  for (uint64_t i = 0; i < kCopyBytes; ++i) wantLocal[kTargetOffset + i] = remoteInit[kOriginOffset + i];
  EXPECT_EQ(local.toHost(), wantLocal);
  EXPECT_EQ(remote.toHost(), remoteInit) << "get() must not write the peer's memory";
}

TEST(DeviceMemoryChannelTest, PutGetReadAndWriteMoveTheDocumentedBytes) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint64_t kBytes = 32768;
  DeviceBuffer<char> remote(kBytes);
  DeviceBuffer<char> local(kBytes);
  DeviceBuffer<uint64_t> readBack(1);
  ASSERT_TRUE(remote.ok() && local.ok() && readBack.ok());
  std::vector<char> remoteInit(kBytes), localInit(kBytes);
  for (uint64_t i = 0; i < kBytes; ++i) {
    remoteInit[i] = static_cast<char>((i * 7 + 1) & 0xff);
    localInit[i] = static_cast<char>((i * 13 + 5) & 0xff);
  }
  ASSERT_TRUE(remote.fromHost(remoteInit) && local.fromHost(localInit));
  MemoryChannelDeviceHandle channel({}, remote.get(), local.get(), nullptr);
  copyMethodsKernel<<<1, 96>>>(channel, readBack.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());

  std::vector<char> wantRemote = remoteInit;
  std::vector<char> wantLocal = localInit;
  for (uint64_t i = 0; i < 4000; ++i) wantRemote[64 + i] = localInit[128 + i];       // put<16>(64, 128, 4000)
  for (uint64_t i = 0; i < 1024; ++i) wantRemote[8192 + i] = localInit[8192 + i];    // put<8, false>(8192, 1024)
  for (uint64_t i = 0; i < 1020; ++i) wantLocal[4096 + i] = remoteInit[12288 + i];   // get<4>(4096, 12288, 1020)
  for (uint64_t i = 0; i < 2048; ++i) wantLocal[16384 + i] = remoteInit[16384 + i];  // get(16384, 2048)
  const uint32_t written = 0xabcdef01u;
  std::memcpy(&wantRemote[20000], &written, 4);
  EXPECT_EQ(remote.toHost(), wantRemote);
  EXPECT_EQ(local.toHost(), wantLocal);
  uint64_t wantRead = 0;
  std::memcpy(&wantRead, &wantRemote[64], 8);
  EXPECT_EQ(readBack.toHost()[0], wantRead) << "read<T>(i) loads element i of the target";
}

TEST(DeviceMemoryChannelTest, PutThenSignalAndPacketsReachTheOtherSide) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint64_t kBytes = 8 * 2000;
  DeviceBuffer<uint64_t> tokens(6);
  DeviceBuffer<char> bufA(kBytes);
  DeviceBuffer<char> bufB(kBytes);
  DeviceBuffer<char> unpackedB(kBytes);
  DeviceBuffer<LL16Packet> packetsA(kBytes / 8);
  DeviceBuffer<LL16Packet> packetsB(kBytes / 8);
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(tokens.ok() && bufA.ok() && bufB.ok() && unpackedB.ok() && packetsA.ok() && packetsB.ok() && errors.ok());
  std::vector<char> payload(kBytes);
  for (uint64_t i = 0; i < kBytes; ++i) payload[i] = static_cast<char>((i * 29 + 3) & 0xff);
  ASSERT_TRUE(bufA.fromHost(payload));

  uint64_t* t = tokens.get();
  const MemoryDevice2DeviceSemaphoreDeviceHandle semA{t + 0, t + 1, t + 3, t + 2};
  const MemoryDevice2DeviceSemaphoreDeviceHandle semB{t + 3, t + 4, t + 0, t + 5};
  MemoryChannelDeviceHandle a(semA, bufB.get(), bufA.get(), packetsA.get());
  MemoryChannelDeviceHandle b(semB, bufA.get(), bufB.get(), packetsB.get());
  MemoryChannelDeviceHandle aLL(semA, packetsB.get(), bufA.get(), packetsA.get());
  MemoryChannelDeviceHandle bLL(semB, packetsA.get(), unpackedB.get(), packetsB.get());
  uint64_t bytes = kBytes;
  uint32_t* errorsPtr = errors.get();
  void* args[] = {&a, &b, &aLL, &bLL, &bytes, &errorsPtr};
  MSCCLPP_TEST_CUDA(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(twoSidesKernel), dim3(2), dim3(128), args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(errors.toHost()[0], 0u);
  EXPECT_EQ(bufB.toHost(), payload) << "put() delivered the origin to the target";
  EXPECT_EQ(unpackedB.toHost(), payload) << "putPackets() + unpackPackets() delivered the origin";
}
