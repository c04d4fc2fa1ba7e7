// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <gtest/gtest.h>

#include <mscclpp/core.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/semaphore.hpp>

#include "common/gpu_test.hpp"

using namespace mscclpp;

TEST(ContextMemoryUsageTest, StartsEmptyAndTouchesNoGpuMemory) {
  auto context = Context::create();
  ContextMemoryUsage usage = context->memoryUsage();
  EXPECT_EQ(usage.deviceBytes, 0u);
  EXPECT_EQ(usage.hostPinnedBytes, 0u);
  EXPECT_EQ(usage.exportedHandles, 0u);
  EXPECT_EQ(usage.tokenPoolChunks, 0u);
  EXPECT_EQ(usage.tokensInUse, 0u);
}

TEST(ContextMemoryUsageTest, CountsExportsWhileTheirRegistrationsLive) {
  MSCCLPP_REQUIRE_GPU();
  auto context = Context::create();
  GpuBuffer<char> buffer(1 << 20);
  {
    RegisteredMemory a = context->registerMemory(buffer.data(), 4096, Transport::CudaIpc);
    RegisteredMemory b = context->registerMemory(buffer.data() + 4096, 4096, Transport::CudaIpc);
    EXPECT_EQ(context->memoryUsage().exportedHandles, 2u);
  }
  EXPECT_EQ(context->memoryUsage().exportedHandles, 0u);
}

TEST(ContextMemoryUsageTest, SemaphoresDrawTokensAndCountersFromOnePooledChunk) {
  MSCCLPP_REQUIRE_GPU();
  auto context = Context::create();
  Endpoint endpoint = context->createEndpoint({Transport::CudaIpc, Device(DeviceType::GPU, 0)});
  Connection connection = context->connect(endpoint, endpoint);
  {
    std::vector<SemaphoreStub> stubs;
    for (int i = 0; i < 100; ++i) stubs.emplace_back(connection);
    std::vector<MemoryDevice2DeviceSemaphore> semaphores;
    for (auto& stub : stubs) semaphores.emplace_back(Semaphore(stub, stub));
    ContextMemoryUsage usage = context->memoryUsage();
    // One token per stub, and an expected and an outbound counter per semaphore.
    EXPECT_EQ(usage.tokensInUse, 300u);
    EXPECT_EQ(usage.tokenPoolChunks, 1u);
    EXPECT_GE(usage.tokenPoolCapacity, 300u);
    EXPECT_GT(usage.deviceBytes, 0u);
  }
  EXPECT_EQ(context->memoryUsage().tokensInUse, 0u);
}
