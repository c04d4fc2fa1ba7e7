// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The semaphore device handles on one GPU. For MemoryDevice2DeviceSemaphoreDeviceHandle two blocks
// play the two GPUs: each one's "remote" inbound token is simply the other block's local token. For
// Host2DeviceSemaphoreDeviceHandle a host thread signals through mapped pinned memory.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/concurrency_device.hpp>
#include <mscclpp/semaphore_device.hpp>
#include <thread>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;
using mscclpp::devtest::MappedHostBuffer;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;

// Device words behind a pair of handles: inbound, outbound and expected counters of side A, then of
// side B; each side's remote inbound token is the other side's inbound token.
enum TokenSlot : int { kInA, kOutA, kExpA, kInB, kOutB, kExpB, kNumSlots };

void makePair(uint64_t* tokens, MemoryDevice2DeviceSemaphoreDeviceHandle& a,
              MemoryDevice2DeviceSemaphoreDeviceHandle& b) {
  a = {tokens + kInA, tokens + kOutA, tokens + kInB, tokens + kExpA};
  b = {tokens + kInB, tokens + kOutB, tokens + kInA, tokens + kExpB};
}

__host__ __device__ uint32_t stampOf(uint32_t side, uint32_t round, uint32_t index) {
  return (side << 28) ^ (round * 4099u) ^ index;
}

// Round i: A's threads fill `toB`, A signals; B waits, checks `toB`, fills `toA`, signals; A waits and
// checks `toA`. A signal must publish the block's plain writes to the waiter.
__global__ void pingPongKernel(MemoryDevice2DeviceSemaphoreDeviceHandle a, MemoryDevice2DeviceSemaphoreDeviceHandle b,
                               uint32_t* toB, uint32_t* toA, uint32_t rounds, uint32_t* errors) {
  const bool isA = blockIdx.x == 0;
  MemoryDevice2DeviceSemaphoreDeviceHandle& self = isA ? a : b;
  for (uint32_t r = 1; r <= rounds; ++r) {
    if (isA) {
      toB[threadIdx.x] = stampOf(0, r, threadIdx.x);
      __syncthreads();
      if (threadIdx.x == 0) {
        self.signal();
        self.wait(kTestSpinLimit);
      }
      __syncthreads();
      if (toA[threadIdx.x] != stampOf(1, r, threadIdx.x)) atomicAdd(errors, 1u);
    } else {
      if (threadIdx.x == 0) self.wait(kTestSpinLimit);
      __syncthreads();
      if (toB[threadIdx.x] != stampOf(0, r, threadIdx.x)) atomicAdd(errors, 1u);
      toA[threadIdx.x] = stampOf(1, r, threadIdx.x);
      __syncthreads();
      if (threadIdx.x == 0) self.signal();
    }
  }
}

// A sends `signals` relaxed signals back to back; B consumes them by polling, then checks that no
// further signal is pending and answers with one relaxed signal that A relaxed-waits for.
__global__ void pollCountKernel(MemoryDevice2DeviceSemaphoreDeviceHandle a, MemoryDevice2DeviceSemaphoreDeviceHandle b,
                                uint32_t signals, uint32_t* results) {
  if (blockIdx.x == 0) {
    for (uint32_t i = 0; i < signals; ++i) a.relaxedSignal();
    a.relaxedWait(kTestSpinLimit);
    results[0] = static_cast<uint32_t>(a.loadOutbound());
  } else {
    uint32_t consumed = 0;
    int64_t spins = 0;
    while (consumed < signals && spins++ < kTestSpinLimit) {
      if (b.poll()) ++consumed;
    }
    results[1] = consumed;
    results[2] = b.poll() ? 1u : 0u;
    results[3] = static_cast<uint32_t>(b.loadExpectedInbound());
    results[4] = static_cast<uint32_t>(b.loadInboundRelaxed());
    b.relaxedSignal();
  }
}

// A's signals come from a different block (so a different SM) in each round, one block at a time:
// the grid barrier between rounds is the hand-over the one-signaler rule asks for. B waits once per
// round. A signaler that reused a stale copy of the outbound count would store a lower token and
// leave B waiting.
__global__ void signalerHandOffKernel(MemoryDevice2DeviceSemaphoreDeviceHandle a,
                                      MemoryDevice2DeviceSemaphoreDeviceHandle b, DeviceSyncer* syncer, uint32_t rounds,
                                      uint32_t* results) {
  const uint32_t signalers = gridDim.x - 1;
  for (uint32_t r = 0; r < rounds; ++r) {
    if (threadIdx.x == 0) {
      if (blockIdx.x == r % signalers) a.signal();
      if (blockIdx.x == signalers) b.wait(kTestSpinLimit);
    }
    syncer->sync(gridDim.x, kTestSpinLimit);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) results[0] = static_cast<uint32_t>(a.loadOutbound());
}

// signal(), then incOutbound() (a fetch_add counting one signal sent some other way), then signal():
// the count continues across both kinds of increment.
__global__ void mixedIncrementKernel(MemoryDevice2DeviceSemaphoreDeviceHandle a, uint64_t* results) {
  a.signal();
  results[0] = a.incOutbound();
  a.signal();
  results[1] = a.loadOutbound();
}

// `waiters` threads of B wait at once, each consuming one of A's signals.
__global__ void concurrentWaitersKernel(MemoryDevice2DeviceSemaphoreDeviceHandle a,
                                        MemoryDevice2DeviceSemaphoreDeviceHandle b, uint32_t* returned) {
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0)
      for (uint32_t i = 0; i < blockDim.x; ++i) a.relaxedSignal();
  } else {
    b.wait(kTestSpinLimit);
    atomicAdd(returned, 1u);
  }
}

// The device consumes `rounds` host signals; after each it checks the host's payload and acknowledges.
__global__ void hostSignalsKernel(Host2DeviceSemaphoreDeviceHandle sem, const uint64_t* payload, uint64_t* ack,
                                  uint32_t rounds, bool usePoll, uint32_t* errors) {
  for (uint32_t r = 1; r <= rounds; ++r) {
    if (usePoll) {
      int64_t spins = 0;
      while (!sem.poll()) {
        if (++spins > kTestSpinLimit) {
          atomicAdd(errors, 1u);
          return;
        }
      }
    } else {
      sem.wait(kTestSpinLimit);
    }
    if (*payload != r * 7919ull) atomicAdd(errors, 1u);
    atomicStore<uint64_t, scopeSystem>(ack, uint64_t{r}, memoryOrderRelease);
  }
}

void runHostSignals(bool usePoll) {
  constexpr uint32_t kRounds = 200;
  MappedHostBuffer<uint64_t> inbound(1);
  MappedHostBuffer<uint64_t> payload(1);
  MappedHostBuffer<uint64_t> ack(1);
  DeviceBuffer<uint64_t> expected(1);
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(inbound.ok() && payload.ok() && ack.ok() && expected.ok() && errors.ok());
  Host2DeviceSemaphoreDeviceHandle sem{inbound.device(), expected.get()};

  hostSignalsKernel<<<1, 1>>>(sem, payload.device(), ack.device(), kRounds, usePoll, errors.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  bool hostOk = true;
  std::thread host([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (uint32_t r = 1; r <= kRounds && hostOk; ++r) {
      atomicStore(payload.host(), uint64_t{r * 7919ull}, memoryOrderRelaxed);
      atomicStore(inbound.host(), uint64_t{r}, memoryOrderRelease);
      while (atomicLoad(ack.host(), memoryOrderAcquire) < r) {
        if (std::chrono::steady_clock::now() > deadline) {
          hostOk = false;
          break;
        }
      }
    }
  });
  const cudaError_t done = cudaDeviceSynchronize();
  host.join();
  MSCCLPP_TEST_CUDA(done);
  EXPECT_TRUE(hostOk) << "the device stopped acknowledging";
  EXPECT_EQ(errors.toHost()[0], 0u) << "payload written before a signal was not visible after the wait";
  EXPECT_EQ(expected.toHost()[0], kRounds) << "each wait consumes exactly one signal";
}

}  // namespace

TEST(DeviceSemaphoreHandleTest, MemorySemaphoreSignalPublishesWritesAcrossBlocksForManyRounds) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint32_t kRounds = 5000;
  constexpr int kThreads = 128;
  DeviceBuffer<uint64_t> tokens(kNumSlots);
  DeviceBuffer<uint32_t> toB(kThreads);
  DeviceBuffer<uint32_t> toA(kThreads);
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(tokens.ok() && toB.ok() && toA.ok() && errors.ok());
  MemoryDevice2DeviceSemaphoreDeviceHandle a, b;
  makePair(tokens.get(), a, b);
  uint32_t* toBPtr = toB.get();
  uint32_t* toAPtr = toA.get();
  uint32_t rounds = kRounds;
  uint32_t* errorsPtr = errors.get();
  void* args[] = {&a, &b, &toBPtr, &toAPtr, &rounds, &errorsPtr};
  MSCCLPP_TEST_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(pingPongKernel), dim3(2), dim3(kThreads),
                                                args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(errors.toHost()[0], 0u);
  const std::vector<uint64_t> t = tokens.toHost();
  for (int slot : {kInA, kOutA, kExpA, kInB, kOutB, kExpB}) {
    EXPECT_EQ(t[slot], kRounds) << "token slot " << slot << ": signals, waits and counters must all agree";
  }
}

TEST(DeviceSemaphoreHandleTest, MemorySemaphorePollConsumesEachSignalOnce) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint32_t kSignals = 1000;
  DeviceBuffer<uint64_t> tokens(kNumSlots);
  DeviceBuffer<uint32_t> results(5);
  ASSERT_TRUE(tokens.ok() && results.ok());
  MemoryDevice2DeviceSemaphoreDeviceHandle a, b;
  makePair(tokens.get(), a, b);
  uint32_t signals = kSignals;
  uint32_t* resultsPtr = results.get();
  void* args[] = {&a, &b, &signals, &resultsPtr};
  MSCCLPP_TEST_CUDA(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(pollCountKernel), dim3(2), dim3(1), args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint32_t> r = results.toHost();
  EXPECT_EQ(r[0], kSignals) << "outbound counts every signal sent";
  EXPECT_EQ(r[1], kSignals) << "poll returned true once per signal";
  EXPECT_EQ(r[2], 0u) << "no signal is left once all were consumed";
  EXPECT_EQ(r[3], kSignals);
  EXPECT_EQ(r[4], kSignals) << "the inbound token holds the sender's outbound count";
  const std::vector<uint64_t> t = tokens.toHost();
  EXPECT_EQ(t[kExpA], 1u) << "A's relaxed wait consumed B's one answer";
}

TEST(DeviceSemaphoreHandleTest, MemorySemaphoreCountsStayExactWhenTheSignalingBlockChangesEachRound) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint32_t kRounds = 3000;
  constexpr int kBlocks = 5;  // four signaling blocks taking turns, one waiting block
  DeviceBuffer<uint64_t> tokens(kNumSlots);
  DeviceBuffer<DeviceSyncer> syncer(1);
  DeviceBuffer<uint32_t> results(1);
  ASSERT_TRUE(tokens.ok() && syncer.ok() && results.ok());
  MemoryDevice2DeviceSemaphoreDeviceHandle a, b;
  makePair(tokens.get(), a, b);
  DeviceSyncer* syncerPtr = syncer.get();
  uint32_t rounds = kRounds;
  uint32_t* resultsPtr = results.get();
  void* args[] = {&a, &b, &syncerPtr, &rounds, &resultsPtr};
  MSCCLPP_TEST_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(signalerHandOffKernel), dim3(kBlocks),
                                                dim3(32), args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(results.toHost()[0], kRounds) << "outbound counts every signal, whichever block sent it";
  const std::vector<uint64_t> t = tokens.toHost();
  EXPECT_EQ(t[kInB], kRounds) << "the last signal carried the full count";
  EXPECT_EQ(t[kExpB], kRounds);
}

TEST(DeviceSemaphoreHandleTest, MemorySemaphoreSignalContinuesTheCountAfterIncOutbound) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<uint64_t> tokens(kNumSlots);
  DeviceBuffer<uint64_t> results(2);
  ASSERT_TRUE(tokens.ok() && results.ok());
  MemoryDevice2DeviceSemaphoreDeviceHandle a, b;
  makePair(tokens.get(), a, b);
  mixedIncrementKernel<<<1, 1>>>(a, results.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint64_t> r = results.toHost();
  EXPECT_EQ(r[0], 2u) << "incOutbound returns the new count";
  EXPECT_EQ(r[1], 3u);
  EXPECT_EQ(tokens.toHost()[kInB], 3u) << "the second signal stored the count after both increments";
}

TEST(DeviceSemaphoreHandleTest, MemorySemaphoreConcurrentWaitersEachConsumeOneSignal) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint32_t kWaiters = 64;
  DeviceBuffer<uint64_t> tokens(kNumSlots);
  DeviceBuffer<uint32_t> returned(1);
  ASSERT_TRUE(tokens.ok() && returned.ok());
  MemoryDevice2DeviceSemaphoreDeviceHandle a, b;
  makePair(tokens.get(), a, b);
  uint32_t* returnedPtr = returned.get();
  void* args[] = {&a, &b, &returnedPtr};
  MSCCLPP_TEST_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(concurrentWaitersKernel), dim3(2),
                                                dim3(kWaiters), args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(returned.toHost()[0], kWaiters);
  EXPECT_EQ(tokens.toHost()[kExpB], kWaiters) << "each waiter took its own expected count";
}

TEST(DeviceSemaphoreHandleTest, HostToDeviceWaitSeesTheHostsWritesBeforeEachSignal) {
  MSCCLPP_REQUIRE_GPU();
  runHostSignals(false);
}

TEST(DeviceSemaphoreHandleTest, HostToDevicePollConsumesEachHostSignalOnce) {
  MSCCLPP_REQUIRE_GPU();
  runHostSignals(true);
}
