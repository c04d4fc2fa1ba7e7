// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// FifoDeviceHandle pushed from many device threads while a host thread plays the proxy, polling the
// mapped pinned slots; a FIFO much smaller than the number of pushes makes the ring wrap many times.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/fifo_device.hpp>
#include <thread>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;
using mscclpp::devtest::MappedHostBuffer;
using mscclpp::devtest::TestFifo;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;

// Trigger s of global thread g: fst = g << 32 | (s + 1) (never 0), snd = s << 32 | g (bit 63 clear).
__global__ void pushKernel(FifoDeviceHandle fifo, uint32_t perThread) {
  const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  for (uint32_t s = 0; s < perThread; ++s) {
    ProxyTrigger trigger;
    trigger.fst = (static_cast<uint64_t>(g) << 32) | (s + 1);
    trigger.snd = (static_cast<uint64_t>(s) << 32) | g;
    fifo.push(trigger, kTestSpinLimit);
  }
}

// Pushes one trigger, reports poll() before and after the host pops it, in between telling the host
// (through `step`) that it may pop.
__global__ void pollThenSyncKernel(FifoDeviceHandle fifo, uint64_t* step, uint64_t* results) {
  ProxyTrigger trigger;
  trigger.fst = 0x1234;
  trigger.snd = 0x5678;
  const uint64_t pos = fifo.push(trigger, kTestSpinLimit);
  results[0] = pos;
  results[1] = fifo.poll(pos) ? 1 : 0;
  atomicStore<uint64_t, scopeSystem>(step, uint64_t{1}, memoryOrderRelease);
  fifo.sync(pos, kTestSpinLimit);
  results[2] = fifo.poll(pos) ? 1 : 0;
  results[3] = fifo.poll(pos + 1) ? 1 : 0;
}

__global__ void triggerConstructorKernel(uint64_t* out) {
  const ProxyTrigger a(TriggerData | TriggerFlag | TriggerSync, 511, 0xfffffffeull, 510, 0x89abcdefull, 0xffffffffull,
                       1023);
  const ProxyTrigger b(TriggerFlag, 0, 0, 0, 0, 1, 0);
  const ProxyTrigger c(TriggerData, 3, 100, 5, 200, 64, 17);
  out[0] = a.fst;
  out[1] = a.snd;
  out[2] = b.fst;
  out[3] = b.snd;
  out[4] = c.fst;
  out[5] = c.snd;
  out[6] = c.fields.dstMemoryId;
  out[7] = c.fields.srcOffset;
}

}  // namespace

TEST(DeviceFifoTest, PushesFromManyThreadsArriveOnceAndInOrderThroughASmallRing) {
  MSCCLPP_REQUIRE_GPU();
  constexpr int kFifoSize = 8;
  constexpr int kBlocks = 4;
  constexpr int kThreads = 32;
  constexpr uint32_t kPerThread = 64;
  constexpr uint32_t kSenders = kBlocks * kThreads;
  constexpr uint64_t kTotal = uint64_t{kSenders} * kPerThread;
  TestFifo fifo(kFifoSize);
  ASSERT_TRUE(fifo.ok());

  pushKernel<<<kBlocks, kThreads>>>(fifo.deviceHandle(), kPerThread);
  MSCCLPP_TEST_CUDA(cudaGetLastError());

  std::vector<uint32_t> nextSeq(kSenders, 0);
  uint64_t popped = 0;
  uint64_t outOfOrder = 0;
  uint64_t validBitMissing = 0;
  std::thread proxy([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    ProxyTrigger t;
    uint64_t rawSnd = 0;
    while (popped < kTotal && fifo.pop(t, rawSnd, deadline)) {
      ++popped;
      if ((rawSnd & detail::TriggerValidBitMask) == 0) ++validBitMissing;
      const uint32_t g = static_cast<uint32_t>(t.fst >> 32);
      const uint32_t s = static_cast<uint32_t>(t.fst) - 1;
      if (g >= kSenders || s != nextSeq[g] || t.snd != ((static_cast<uint64_t>(s) << 32) | g)) {
        ++outOfOrder;
        if (g < kSenders) nextSeq[g] = s + 1;
      } else {
        ++nextSeq[g];
      }
    }
  });
  const cudaError_t done = cudaDeviceSynchronize();
  proxy.join();
  MSCCLPP_TEST_CUDA(done);
  EXPECT_EQ(popped, kTotal) << "every push reaches the proxy exactly once";
  EXPECT_EQ(outOfOrder, 0u) << "a thread's pushes arrive in its order, intact";
  EXPECT_EQ(validBitMissing, 0u) << "push sets bit 63 of snd";
  for (uint32_t g = 0; g < kSenders; ++g) ASSERT_EQ(nextSeq[g], kPerThread) << "sender " << g;
  EXPECT_EQ(fifo.head(), kTotal);
  EXPECT_EQ(fifo.tail(), kTotal);
  EXPECT_LE(fifo.tailCache(), kTotal) << "the cached tail is never ahead of the tail";
}

TEST(DeviceFifoTest, PollAndSyncTrackWhetherTheProxyPopped) {
  MSCCLPP_REQUIRE_GPU();
  TestFifo fifo(4);
  MappedHostBuffer<uint64_t> step(1);
  DeviceBuffer<uint64_t> results(4);
  ASSERT_TRUE(fifo.ok() && step.ok() && results.ok());

  pollThenSyncKernel<<<1, 1>>>(fifo.deviceHandle(), step.device(), results.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());

  bool popped = false;
  uint64_t fst = 0;
  uint64_t snd = 0;
  std::thread proxy([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (atomicLoad(step.host(), memoryOrderAcquire) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return;
    }
    ProxyTrigger t;
    uint64_t rawSnd = 0;
    popped = fifo.pop(t, rawSnd, deadline);
    fst = t.fst;
    snd = t.snd;
  });
  const cudaError_t done = cudaDeviceSynchronize();
  proxy.join();
  MSCCLPP_TEST_CUDA(done);
  ASSERT_TRUE(popped);
  EXPECT_EQ(fst, 0x1234u);
  EXPECT_EQ(snd, 0x5678u);
  const std::vector<uint64_t> r = results.toHost();
  EXPECT_EQ(r[0], 0u) << "the first push takes position 0";
  EXPECT_EQ(r[1], 0u) << "poll is false before the proxy pops";
  EXPECT_EQ(r[2], 1u) << "poll is true after sync returned";
  EXPECT_EQ(r[3], 0u) << "a position not yet pushed is not popped";
  EXPECT_EQ(fifo.tailCache(), 1u) << "sync and poll refresh the cached tail";
}

TEST(DeviceFifoTest, TriggerConstructorPacksTheDocumentedBits) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<uint64_t> out(8);
  ASSERT_TRUE(out.ok());
  triggerConstructorKernel<<<1, 1>>>(out.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint64_t> o = out.toHost();
  EXPECT_EQ(o[0], (0x89abcdefull << 32) | 0xffffffffull);
  EXPECT_EQ(o[1], 0xfffffffeull | (510ull << 32) | (511ull << 41) | (7ull << 50) | (1023ull << 53));
  EXPECT_EQ(o[2], 1u);
  EXPECT_EQ(o[3], TriggerFlag << 50);
  EXPECT_EQ(o[4], (200ull << 32) | 64u);
  EXPECT_EQ(o[5], 100ull | (5ull << 32) | (3ull << 41) | (TriggerData << 50) | (17ull << 53));
  EXPECT_EQ(o[6], 3u);
  EXPECT_EQ(o[7], 200u);
}
