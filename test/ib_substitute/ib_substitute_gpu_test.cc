// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// GPU memory over IB with the SUBSTITUTE verbs provider (GPU machine only; skipped elsewhere): the
// registration path taken (DMA-BUF where the driver allows, else peer memory) and the error that names
// both when neither works. The substitute moves GPU data with cudaMemcpy; a real HCA would DMA it.

#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mscclpp/core.hpp>
#include <vector>

#include "common/gpu_test.hpp"
#include "gpu/driver_api.hpp"
#include "ib_substitute/ib_test_util.hpp"
#include "memory/registered_memory.hpp"
#include "transport/ib/ib_objects.hpp"

using namespace mscclpp;

namespace {

std::string config() {
  const char* c = std::getenv("MSCCLPP_IB_TEST_CONFIG");
  return c ? c : "";
}

/// Whether this GPU and driver offer DMA-BUF export: where they do, the substitute's DMA-BUF
/// registration must be the one used.
bool driverHasDmaBuf(int gpu) {
  CUdevice device;
  int supported = 0;
  if (cu::cuDeviceGet(&device, gpu) != CUDA_SUCCESS) return false;
  if (cu::cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) != CUDA_SUCCESS) return false;
  return supported != 0;
}

class GpuBuffer {
 public:
  explicit GpuBuffer(size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr_, bytes), cudaSuccess); }
  ~GpuBuffer() { (void)cudaFree(ptr_); }
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;
  char* get() const { return static_cast<char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

const char* pathOf(const RegisteredMemory& memory, Transport transport) {
  auto* entry = static_cast<const IbMemory*>(RegisteredMemoryAccess::impl(memory)->find(transport));
  return entry && entry->mr() ? entry->mr()->path() : "none";
}

}  // namespace

TEST(IbSubstituteGpu, GpuMemoryRegistersThroughDmaBufWhereTheDriverAllowsElsePeerMemory) {
  MSCCLPP_REQUIRE_GPU();
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  if (config() == "substitute_gpu_no_path") GTEST_SKIP() << "this configuration has no working path";
  constexpr size_t kBytes = (4 << 20) + 3;
  GpuBuffer src(kBytes), dst(kBytes);
  auto context = Context::create();
  const bool dmabuf = config() == "substitute" && driverHasDmaBuf(0);
  if (config() == "substitute" && !dmabuf) {
    // Neither DMA-BUF (the driver lacks it) nor peer memory (the substitute refuses it by default).
    EXPECT_THROW(context->registerMemory(src.get(), kBytes, Transport::IB0), IbError);
    GTEST_SKIP() << "GPU 0's driver has no DMA-BUF: the fallback is tested in ib_substitute_gpu_peer_memory";
  }
  RegisteredMemory srcMem = context->registerMemory(src.get(), kBytes, Transport::IB0);
  RegisteredMemory dstMem = context->registerMemory(dst.get(), kBytes, Transport::IB1);
  EXPECT_STREQ(pathOf(srcMem, Transport::IB0), dmabuf ? "dma-buf" : "peer memory");
  std::vector<char> host(kBytes);
  for (size_t i = 0; i < kBytes; ++i) host[i] = static_cast<char>(i * 131 + 7);
  ASSERT_EQ(cudaMemcpy(src.get(), host.data(), kBytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(dst.get(), 0, kBytes), cudaSuccess);
  Endpoint e0 = context->createEndpoint({Transport::IB0, DeviceType::GPU});
  Endpoint e1 = context->createEndpoint({Transport::IB1, DeviceType::GPU});
  Connection forward = context->connect(e0, e1);
  Connection backward = context->connect(e1, e0);
  // Data after the first word, then the word itself as a token: 0 + 42 by atomics, or 42 written.
  forward.write(dstMem, 8, srcMem, 0, kBytes - 8);
  uint64_t counter = 0;
  forward.updateAndSync(dstMem, 0, &counter, 42);
  forward.flush();
  std::vector<char> back(kBytes);
  ASSERT_EQ(cudaMemcpy(back.data(), dst.get(), kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  uint64_t token = 0;
  std::memcpy(&token, back.data(), 8);
  EXPECT_EQ(token, 42u);
  for (size_t i = 8; i < kBytes; ++i) ASSERT_EQ(back[i], host[i - 8]) << "byte " << i;
}

TEST(IbSubstituteGpu, WithoutDmaBufOrPeerMemoryTheErrorNamesBothPaths) {
  MSCCLPP_REQUIRE_GPU();
  MSCCLPP_REQUIRE_IB_CONFIG("substitute_gpu_no_path");
  GpuBuffer buffer(1 << 20);
  auto context = Context::create();
  try {
    context->registerMemory(buffer.get(), 1 << 20, Transport::IB0);
    FAIL() << "registration of GPU memory succeeded with neither path available";
  } catch (const IbError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("DMA-BUF was not used"), std::string::npos) << what;
    EXPECT_NE(what.find("nvidia_peermem"), std::string::npos) << what;
    if (driverHasDmaBuf(0)) EXPECT_NE(what.find("ibv_reg_dmabuf_mr: EOPNOTSUPP"), std::string::npos) << what;
  }
}
