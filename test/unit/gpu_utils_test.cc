// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <gtest/gtest.h>

#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/numa.hpp>
#include <utility>
#include <vector>

#include "common/gpu_test.hpp"
#include "gpu/cuda_event.hpp"
#include "gpu/driver_api.hpp"

using namespace mscclpp;

TEST(GpuCapabilitiesTest, ProbeNeverThrowsAndExplainsAMissingGpu) {
  const GpuCapabilities& caps = gpuCapabilities();
  EXPECT_EQ(&caps, &gpuCapabilities()) << "computed once";
  EXPECT_GT(caps.runtimeVersion, 0);
  if (caps.gpuAvailable()) {
    EXPECT_EQ(caps.devices.size(), static_cast<size_t>(caps.deviceCount));
    EXPECT_TRUE(caps.unavailableReason.empty());
  } else {
    EXPECT_TRUE(caps.devices.empty());
    EXPECT_NE(caps.unavailableReason.find("no usable GPU"), std::string::npos) << caps.unavailableReason;
  }
  EXPECT_FALSE(caps.toString().empty());
}

TEST(GpuCapabilitiesTest, DriverSymbolsResolveExactlyWhenAGpuIsUsable) {
  if (gpuCapabilities().gpuAvailable()) {
    EXPECT_EQ(driverUnavailableReason(), "");
    EXPECT_NE(driverApi().cuMemCreate, nullptr);
  } else {
    // Without a driver every wrapper reports "not found" rather than crashing.
    int value = 0;
    EXPECT_NE(cu::cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0), CUDA_SUCCESS);
  }
}

TEST(GpuCapabilitiesTest, NvlsIsNeverUsed) { EXPECT_FALSE(isNvlsSupported()); }

TEST(GpuUtilsTest, DeviceGuardRestoresTheDevice) {
  MSCCLPP_REQUIRE_GPU();
  int before = -1;
  ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  {
    CudaDeviceGuard guard(gpuCapabilities().deviceCount - 1);
    int inside = -1;
    ASSERT_EQ(cudaGetDevice(&inside), cudaSuccess);
    EXPECT_EQ(inside, gpuCapabilities().deviceCount - 1);
  }
  int after = -1;
  ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
  EXPECT_EQ(after, before);
}

TEST(GpuUtilsTest, StreamWithFlagsCanBeSetOnlyOnce) {
  MSCCLPP_REQUIRE_GPU();
  CudaStreamWithFlags stream;
  EXPECT_TRUE(stream.empty());
  stream.set(cudaStreamNonBlocking);
  EXPECT_FALSE(stream.empty());
  EXPECT_THROW(stream.set(cudaStreamNonBlocking), Error);
}

TEST(GpuUtilsTest, StreamPoolReusesReturnedStreams) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = std::make_shared<GpuStreamPool>();
  cudaStream_t first;
  {
    GpuStream s = pool->getStream();
    first = s;
  }
  GpuStream again = pool->getStream();
  EXPECT_EQ(static_cast<cudaStream_t>(again), first);
  GpuStream other = pool->getStream();
  EXPECT_NE(static_cast<cudaStream_t>(other), first);
}

TEST(GpuUtilsTest, StreamCopiesShareTheStreamUntilTheLastIsGone) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = std::make_shared<GpuStreamPool>();
  cudaStream_t shared;
  {
    GpuStream original = pool->getStream();
    shared = original;
    {
      GpuStream copy = original;
      EXPECT_EQ(static_cast<cudaStream_t>(copy), shared);
    }
    // One copy is gone, one still holds the stream: the pool must not lend it again.
    GpuStream meanwhile = pool->getStream();
    EXPECT_NE(static_cast<cudaStream_t>(meanwhile), shared);
  }
  // Both copies are gone (after `meanwhile`), so the shared stream is the last one returned, which
  // the pool lends first.
  GpuStream next = pool->getStream();
  EXPECT_EQ(static_cast<cudaStream_t>(next), shared);
}

TEST(CudaEventTest, CreationFailureThrowsCudaError) {
  // Flags no CUDA version defines are refused on a GPU machine; without a GPU any creation fails.
  EXPECT_THROW(CudaEvent(~0u), CudaError);
}

TEST(CudaEventTest, MovesHandTheEventOverAndLeaveNone) {
  MSCCLPP_REQUIRE_GPU();
  CudaStreamWithFlags stream(cudaStreamNonBlocking);
  CudaEvent first(cudaEventDisableTiming);
  const cudaEvent_t handle = first;
  ASSERT_NE(handle, nullptr);
  ASSERT_EQ(cudaEventRecord(first, stream), cudaSuccess);
  CudaEvent second(std::move(first));
  EXPECT_EQ(static_cast<cudaEvent_t>(first), nullptr);
  EXPECT_EQ(static_cast<cudaEvent_t>(second), handle);
  CudaEvent third(cudaEventDisableTiming);
  third = std::move(second);
  EXPECT_EQ(static_cast<cudaEvent_t>(second), nullptr);
  EXPECT_EQ(static_cast<cudaEvent_t>(third), handle);
  // The handle still names the event recorded above, which completes.
  EXPECT_EQ(cudaEventSynchronize(third), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(third), cudaSuccess);
}

TEST(CudaEventTest, TimingIsKeptByDefaultAndDroppedOnRequest) {
  MSCCLPP_REQUIRE_GPU();
  CudaStreamWithFlags stream(cudaStreamNonBlocking);
  CudaEvent start, stop;
  CudaEvent untimedStart(cudaEventDisableTiming), untimedStop(cudaEventDisableTiming);
  for (cudaEvent_t event : {static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(untimedStart)}) {
    ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  }
  for (cudaEvent_t event : {static_cast<cudaEvent_t>(stop), static_cast<cudaEvent_t>(untimedStop)}) {
    ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GE(ms, 0.0f);
  EXPECT_NE(cudaEventElapsedTime(&ms, untimedStart, untimedStop), cudaSuccess);
  cudaGetLastError();
}

TEST(GpuUtilsTest, CudaThrowNamesTheCallAndThePlace) {
  try {
    MSCCLPP_CUDATHROW(cudaErrorInvalidValue);
    FAIL() << "MSCCLPP_CUDATHROW did not throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.getErrorCode(), cudaErrorInvalidValue);
    const std::string what = e.what();
    const std::string want = std::string("Call to cudaErrorInvalidValue failed. ") + __FILE__ + ":";
    EXPECT_EQ(what.rfind(want, 0), 0u) << what;
  }
}

TEST(GpuUtilsTest, CuThrowNamesTheCallAndThePlace) {
  try {
    MSCCLPP_CUTHROW(CUDA_ERROR_INVALID_VALUE);
    FAIL() << "MSCCLPP_CUTHROW did not throw";
  } catch (const CuError& e) {
    EXPECT_EQ(e.getErrorCode(), CUDA_ERROR_INVALID_VALUE);
    const std::string what = e.what();
    const std::string want = std::string("Call to CUDA_ERROR_INVALID_VALUE failed. ") + __FILE__ + ":";
    EXPECT_EQ(what.rfind(want, 0), 0u) << what;
  }
}

TEST(GpuUtilsTest, CallocZeroesAndCopiesRoundTrip) {
  MSCCLPP_REQUIRE_GPU();
  const size_t n = 1 << 20;
  auto dev = detail::gpuCallocShared<int>(n);
  std::vector<int> host(n, -1);
  gpuMemcpy(host.data(), dev.get(), n, cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < n; i += 4097) ASSERT_EQ(host[i], 0) << i;
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i);
  gpuMemcpy(dev.get(), host.data(), n, cudaMemcpyHostToDevice);
  std::vector<int> back(n);
  gpuMemcpy(back.data(), dev.get(), n, cudaMemcpyDeviceToHost);
  EXPECT_EQ(back, host);
  EXPECT_EQ(detail::gpuIdFromAddress(dev.get()), 0);
  EXPECT_EQ(detail::gpuIdFromAddress(host.data()), -1);
}

TEST(GpuUtilsTest, PhysicalAllocationIsGranularZeroedAndCuMem) {
  MSCCLPP_REQUIRE_GPU();
  if (!gpuCapabilities().devices[0].virtualMemoryManagement) GTEST_SKIP() << "no VMM on GPU 0";
  size_t gran = detail::getCuAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  EXPECT_GT(gran, 0u);
  auto mem = detail::gpuCallocPhysicalShared<char>(100);
  EXPECT_TRUE(isCuMemMapAllocated(mem.get()));
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(cu::cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(mem.get())), CUDA_SUCCESS);
  EXPECT_EQ(size, gran);
  std::vector<char> host(gran, 1);
  gpuMemcpy(host.data(), mem.get(), gran, cudaMemcpyDeviceToHost);
  EXPECT_EQ(host, std::vector<char>(gran, 0));
}

TEST(GpuUtilsTest, CudaMallocMemoryIsNotCuMem) {
  MSCCLPP_REQUIRE_GPU();
  auto mem = detail::gpuCallocShared<char>(4096);
  EXPECT_FALSE(isCuMemMapAllocated(mem.get()));
  int onHost = 0;
  EXPECT_FALSE(isCuMemMapAllocated(&onHost));
}

TEST(GpuUtilsTest, GpuBufferIsExportableMemoryOfAtLeastTheRequestedSize) {
  MSCCLPP_REQUIRE_GPU();
  GpuBuffer<float> buffer(1000);
  EXPECT_EQ(buffer.nelems(), 1000u);
  EXPECT_GE(buffer.bytes(), 1000 * sizeof(float));
  EXPECT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.deviceId(), 0);
  EXPECT_EQ(isCuMemMapAllocated(buffer.data()), gpuCapabilities().devices[0].virtualMemoryManagement);
  GpuBuffer<float> empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.bytes(), 0u);
}

TEST(GpuUtilsTest, MemsetSetsEveryByte) {
  MSCCLPP_REQUIRE_GPU();
  auto mem = detail::gpuCallocShared<char>(3000);
  gpuMemset(mem.get(), 0x5a, 3000);
  std::vector<char> host(3000);
  gpuMemcpy(host.data(), mem.get(), 3000, cudaMemcpyDeviceToHost);
  EXPECT_EQ(host, std::vector<char>(3000, 0x5a));
}

TEST(GpuUtilsTest, FabricProbeAnswersWithoutThrowing) {
  MSCCLPP_REQUIRE_GPU();
  bool usable = fabricHandlesUsable(0);
  if (!gpuCapabilities().devices[0].fabricHandlesAdvertised) EXPECT_FALSE(usable);
  EXPECT_EQ(usable, fabricHandlesUsable(0)) << "cached";
  EXPECT_FALSE(fabricHandlesUsable(-1));
}

TEST(NumaTest, UnknownNodeIsToleratedAndBadNodeRejected) {
  EXPECT_NO_THROW(numaBind(-1));
  EXPECT_THROW(numaBind(1 << 20), Error);
}

TEST(NumaTest, GpuNumaNodeIsANodeOrUnknown) {
  MSCCLPP_REQUIRE_GPU();
  int node = getDeviceNumaNode(0);
  EXPECT_GE(node, -1);
  EXPECT_EQ(node, gpuCapabilities().devices[0].numaNode);
}
