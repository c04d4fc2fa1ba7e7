// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// DeviceSyncer as a grid barrier over every co-resident block, and DeviceSemaphore as a counting
// semaphore, both checked through plain (non-atomic) memory accesses they must order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/concurrency_device.hpp>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;

// Round r: every block stamps its slot of buffer r % 2 with r, passes the barrier, and checks every
// other block's stamp. Two buffers suffice: no block can stamp buffer r % 2 again (round r + 2)
// before every block has passed barrier r + 1, i.e. finished checking round r.
__global__ void syncerKernel(DeviceSyncer* syncer, uint32_t* stamps, uint32_t rounds, uint32_t* errors) {
  for (uint32_t r = 1; r <= rounds; ++r) {
    uint32_t* buffer = stamps + (r % 2) * gridDim.x;
    if (threadIdx.x == 0) buffer[blockIdx.x] = r;
    syncer->sync(gridDim.x, kTestSpinLimit);
    for (uint32_t b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
      if (buffer[b] != r) atomicAdd(errors, 1u);
    }
  }
}

// Thread 0 of every block enters a critical section guarded by the semaphore `rounds` times; inside,
// it counts the threads present and bumps a plain counter.
__global__ void semaphoreKernel(DeviceSemaphore* semaphore, uint32_t rounds, uint32_t* inside, uint32_t* maxInside,
                                uint32_t* plainCounter) {
  if (threadIdx.x != 0) return;
  for (uint32_t r = 0; r < rounds; ++r) {
    semaphore->acquire(kTestSpinLimit);
    const uint32_t present = atomicFetchAdd<uint32_t, scopeDevice>(inside, 1u, memoryOrderRelaxed) + 1;
    atomicMax(maxInside, present);
    const uint32_t value = *plainCounter;
    __nanosleep(100);
    *plainCounter = value + 1;
    atomicFetchAdd<uint32_t, scopeDevice>(inside, 0xffffffffu, memoryOrderRelaxed);
    semaphore->release();
  }
}

__global__ void semaphoreSetKernel(DeviceSemaphore* semaphore, int units, uint32_t* acquired) {
  semaphore->set(units);
  for (int i = 0; i < units; ++i) {
    semaphore->acquire(kTestSpinLimit);
    ++*acquired;
  }
}

int coResidentBlocks(const void* kernel, int threads) {
  int perSm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, 0) != cudaSuccess) return 0;
  return std::min(perSm, 2) * mscclpp::devtest::multiprocessorCount();
}

}  // namespace

TEST(DeviceSyncerTest, EveryBlockSeesEveryOtherBlocksWritesAfterEachSync) {
  MSCCLPP_REQUIRE_GPU();
  constexpr int kThreads = 128;
  constexpr uint32_t kRounds = 2000;
  const int blocks = coResidentBlocks(reinterpret_cast<const void*>(syncerKernel), kThreads);
  ASSERT_GT(blocks, 1);
  DeviceBuffer<DeviceSyncer> syncer(1);
  DeviceBuffer<uint32_t> stamps(2 * static_cast<size_t>(blocks));
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(syncer.ok() && stamps.ok() && errors.ok());
  DeviceSyncer* syncerPtr = syncer.get();
  uint32_t* stampsPtr = stamps.get();
  uint32_t rounds = kRounds;
  uint32_t* errorsPtr = errors.get();
  void* args[] = {&syncerPtr, &stampsPtr, &rounds, &errorsPtr};
  // A cooperative launch guarantees the co-residency the barrier needs (or fails to launch).
  MSCCLPP_TEST_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(syncerKernel), dim3(blocks),
                                                dim3(kThreads), args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(errors.toHost()[0], 0u) << blocks << " blocks, " << kRounds << " rounds";
}

TEST(DeviceSyncerTest, ASingleBlockPassesWithoutWaiting) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<DeviceSyncer> syncer(1);
  DeviceBuffer<uint32_t> stamps(2);
  DeviceBuffer<uint32_t> errors(1);
  ASSERT_TRUE(syncer.ok() && stamps.ok() && errors.ok());
  syncerKernel<<<1, 64>>>(syncer.get(), stamps.get(), 10, errors.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(errors.toHost()[0], 0u);
}

TEST(DeviceSemaphoreTest, OneUnitMakesACriticalSectionAcrossBlocks) {
  MSCCLPP_REQUIRE_GPU();
  constexpr int kBlocks = 64;
  constexpr uint32_t kRounds = 50;
  DeviceBuffer<DeviceSemaphore> semaphore(1);
  DeviceBuffer<uint32_t> counters(3);
  ASSERT_TRUE(semaphore.ok() && counters.ok());
  const DeviceSemaphore one(1);
  MSCCLPP_TEST_CUDA(cudaMemcpy(semaphore.get(), &one, sizeof(one), cudaMemcpyHostToDevice));
  semaphoreKernel<<<kBlocks, 32>>>(semaphore.get(), kRounds, counters.get(), counters.get() + 1, counters.get() + 2);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint32_t> c = counters.toHost();
  EXPECT_EQ(c[0], 0u) << "every holder left";
  EXPECT_EQ(c[1], 1u) << "never more than one holder";
  EXPECT_EQ(c[2], kBlocks * kRounds) << "no increment of the guarded counter was lost";
}

TEST(DeviceSemaphoreTest, ThreeUnitsAdmitAtMostThreeHolders) {
  MSCCLPP_REQUIRE_GPU();
  constexpr int kBlocks = 64;
  constexpr uint32_t kRounds = 50;
  DeviceBuffer<DeviceSemaphore> semaphore(1);
  DeviceBuffer<uint32_t> counters(3);
  ASSERT_TRUE(semaphore.ok() && counters.ok());
  const DeviceSemaphore three(3);
  MSCCLPP_TEST_CUDA(cudaMemcpy(semaphore.get(), &three, sizeof(three), cudaMemcpyHostToDevice));
  semaphoreKernel<<<kBlocks, 32>>>(semaphore.get(), kRounds, counters.get(), counters.get() + 1, counters.get() + 2);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint32_t> c = counters.toHost();
  EXPECT_EQ(c[0], 0u);
  EXPECT_GE(c[1], 1u);
  EXPECT_LE(c[1], 3u);
}

TEST(DeviceSemaphoreTest, SetMakesThatManyUnitsAvailable) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<DeviceSemaphore> semaphore(1);
  DeviceBuffer<uint32_t> acquired(1);
  ASSERT_TRUE(semaphore.ok() && acquired.ok());
  semaphoreSetKernel<<<1, 1>>>(semaphore.get(), 5, acquired.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(acquired.toHost()[0], 5u);
}
