// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Every request method of the port channel handles pushes the documented trigger, and the flushing
// ones return only after the proxy took the request. A host thread plays the proxy.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/port_channel_device.hpp>
#include <thread>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;
using mscclpp::devtest::MappedHostBuffer;
using mscclpp::devtest::TestFifo;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;
constexpr SemaphoreId kSemaphoreId = 37;
constexpr MemoryId kDst = 6;
constexpr MemoryId kSrc = 9;
constexpr uint32_t kRequests = 15;

// Issues every request form once, then: poll() before any signal (results[0]), a wait() for the
// host's first signal, a poll() loop for its second. `phase` tells the host when to signal.
__global__ void requestsKernel(PortChannelDeviceHandle channel, uint64_t* phase, uint64_t* results) {
  BasePortChannelDeviceHandle& base = channel;
  base.put(MemoryId{3}, uint64_t{100}, MemoryId{5}, uint64_t{200}, uint64_t{64});
  base.put(MemoryId{3}, MemoryId{5}, uint64_t{300}, uint64_t{32});
  base.signal();
  base.putWithSignal(MemoryId{4}, uint64_t{1}, MemoryId{2}, uint64_t{2}, uint64_t{16});
  base.putWithSignal(MemoryId{4}, MemoryId{2}, uint64_t{8}, uint64_t{24});
  base.putWithSignalAndFlush(MemoryId{1}, uint64_t{10}, MemoryId{0}, uint64_t{20}, uint64_t{40}, kTestSpinLimit);
  results[1] = atomicLoad<uint64_t, scopeSystem>(channel.fifo_.tail, memoryOrderAcquire);
  base.putWithSignalAndFlush(MemoryId{1}, MemoryId{0}, uint64_t{48}, uint64_t{56}, kTestSpinLimit);
  base.flush(kTestSpinLimit);
  results[2] = atomicLoad<uint64_t, scopeSystem>(channel.fifo_.tail, memoryOrderAcquire);
  channel.put(uint64_t{11}, uint64_t{22}, uint64_t{33});
  channel.put(uint64_t{44}, uint64_t{55});
  channel.putWithSignal(uint64_t{66}, uint64_t{77}, uint64_t{88});
  channel.putWithSignal(uint64_t{99}, uint64_t{111});
  channel.putWithSignalAndFlush(uint64_t{122}, uint64_t{133}, uint64_t{144}, kTestSpinLimit);
  channel.putWithSignalAndFlush(uint64_t{155}, uint64_t{166});
  channel.flush(kTestSpinLimit);

  results[0] = channel.poll() ? 1 : 0;
  atomicStore<uint64_t, scopeSystem>(phase, uint64_t{1}, memoryOrderRelease);
  channel.wait(kTestSpinLimit);
  int64_t spins = 0;
  while (!channel.poll() && spins++ < kTestSpinLimit) {
  }
  results[3] = spins < kTestSpinLimit ? 1 : 0;
  results[4] = channel.poll() ? 1 : 0;
}

struct Expected {
  TriggerType type;
  uint32_t dst;
  uint64_t dstOffset;
  uint32_t src;
  uint64_t srcOffset;
  uint64_t size;
};

}  // namespace

TEST(DevicePortChannelTest, EveryRequestPushesItsTriggerAndFlushesWaitForTheProxy) {
  MSCCLPP_REQUIRE_GPU();
  TestFifo fifo(4);
  MappedHostBuffer<uint64_t> inbound(1);
  MappedHostBuffer<uint64_t> phase(1);
  DeviceBuffer<uint64_t> expectedInbound(1);
  DeviceBuffer<uint64_t> results(5);
  ASSERT_TRUE(fifo.ok() && inbound.ok() && phase.ok() && expectedInbound.ok() && results.ok());
  Host2DeviceSemaphoreDeviceHandle semaphore{inbound.device(), expectedInbound.get()};
  PortChannelDeviceHandle channel(kSemaphoreId, semaphore, fifo.deviceHandle(), kDst, kSrc);

  requestsKernel<<<1, 1>>>(channel, phase.device(), results.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());

  std::vector<ProxyTrigger> got;
  bool signaled = false;
  std::thread proxy([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    ProxyTrigger t;
    uint64_t rawSnd = 0;
    while (got.size() < kRequests && fifo.pop(t, rawSnd, deadline)) got.push_back(t);
    while (atomicLoad(phase.host(), memoryOrderAcquire) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return;
    }
    atomicStore(inbound.host(), uint64_t{1}, memoryOrderRelease);
    atomicStore(inbound.host(), uint64_t{2}, memoryOrderRelease);
    signaled = true;
  });
  const cudaError_t done = cudaDeviceSynchronize();
  proxy.join();
  MSCCLPP_TEST_CUDA(done);
  ASSERT_TRUE(signaled);
  ASSERT_EQ(got.size(), kRequests);

  const TriggerType data = TriggerData;
  const TriggerType dataFlag = TriggerData | TriggerFlag;
  const TriggerType dataFlagSync = TriggerData | TriggerFlag | TriggerSync;
  const std::vector<Expected> want = {
      {data, 3, 100, 5, 200, 64},
      {data, 3, 300, 5, 300, 32},
      {TriggerFlag, 0, 0, 0, 0, 1},
      {dataFlag, 4, 1, 2, 2, 16},
      {dataFlag, 4, 8, 2, 8, 24},
      {dataFlagSync, 1, 10, 0, 20, 40},
      {dataFlagSync, 1, 48, 0, 48, 56},
      {TriggerSync, 0, 0, 0, 0, 1},
      {data, kDst, 11, kSrc, 22, 33},
      {data, kDst, 44, kSrc, 44, 55},
      {dataFlag, kDst, 66, kSrc, 77, 88},
      {dataFlag, kDst, 99, kSrc, 99, 111},
      {dataFlagSync, kDst, 122, kSrc, 133, 144},
      {dataFlagSync, kDst, 155, kSrc, 155, 166},
      {TriggerSync, 0, 0, 0, 0, 1},
  };
  ASSERT_EQ(want.size(), kRequests);
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& f = got[i].fields;
    EXPECT_EQ(f.type, want[i].type) << "request " << i;
    EXPECT_EQ(f.dstMemoryId, want[i].dst) << "request " << i;
    EXPECT_EQ(f.dstOffset, want[i].dstOffset) << "request " << i;
    EXPECT_EQ(f.srcMemoryId, want[i].src) << "request " << i;
    EXPECT_EQ(f.srcOffset, want[i].srcOffset) << "request " << i;
    EXPECT_EQ(f.size, want[i].size) << "request " << i;
    EXPECT_EQ(f.semaphoreId, kSemaphoreId) << "request " << i;
  }

  const std::vector<uint64_t> r = results.toHost();
  EXPECT_EQ(r[0], 0u) << "poll() before any signal";
  EXPECT_GE(r[1], 6u) << "putWithSignalAndFlush returned before the proxy popped it";
  EXPECT_GE(r[2], 8u) << "flush returned before the proxy popped it";
  EXPECT_EQ(r[3], 1u) << "poll() saw the second signal";
  EXPECT_EQ(r[4], 0u) << "two signals satisfy exactly one wait and one poll";
  EXPECT_EQ(expectedInbound.toHost()[0], 2u);
}
