// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/gpu_utils.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<decltype(&mscclpp::isNvlsSupported), bool (*)()>);
static_assert(std::is_same_v<decltype(&mscclpp::isCuMemMapAllocated), bool (*)(void*)>);
static_assert(std::is_copy_constructible_v<mscclpp::GpuStream>);

void useGpuUtils() {
  MSCCLPP_CUDATHROW(cudaGetLastError());
  MSCCLPP_CUTHROW(CUDA_SUCCESS);
  mscclpp::AvoidCudaGraphCaptureGuard captureGuard;
  mscclpp::CudaDeviceGuard deviceGuard(0);
  mscclpp::CudaStreamWithFlags streamWithFlags(cudaStreamNonBlocking);
  if (streamWithFlags.empty()) streamWithFlags.set(cudaStreamNonBlocking);
  cudaStream_t raw = streamWithFlags;
  std::shared_ptr<mscclpp::GpuStreamPool> pool = mscclpp::gpuStreamPool();
  mscclpp::GpuStream stream = pool->getStream();
  mscclpp::GpuStream shared = stream;
  cudaStream_t fromPool = shared;
  (void)stream.deviceId();
  pool->clear();
  mscclpp::detail::setReadWriteMemoryAccess(nullptr, 0);
  (void)mscclpp::detail::gpuIdFromAddress(nullptr);
  void* device = mscclpp::detail::gpuCalloc(64);
  void* host = mscclpp::detail::gpuCallocHost(64, cudaHostAllocMapped);
  mscclpp::detail::gpuMemcpyAsync(device, host, 64, raw);
  mscclpp::detail::gpuMemcpy(host, device, 64, cudaMemcpyDeviceToHost);
  mscclpp::detail::gpuFree(device);
  mscclpp::detail::gpuFreeHost(host);
  std::shared_ptr<int> a = mscclpp::detail::gpuCallocShared<int>(4);
  mscclpp::detail::UniqueGpuPtr<int> b = mscclpp::detail::gpuCallocUnique<int>();
  std::shared_ptr<uint64_t> c = mscclpp::detail::gpuCallocHostShared<uint64_t>();
  mscclpp::detail::UniqueGpuHostPtr<uint64_t> d = mscclpp::detail::gpuCallocHostUnique<uint64_t>(2, 0);
  mscclpp::gpuMemcpyAsync<int>(a.get(), b.get(), 1, fromPool);
  mscclpp::gpuMemcpy(a.get(), b.get(), 1, cudaMemcpyDeviceToDevice);
#if (CUDA_NVLS_API_AVAILABLE)
  if (mscclpp::detail::nvlsCompatibleMemHandleType == CUmemAllocationHandleType{}) return;
  std::shared_ptr<char> physical = mscclpp::detail::gpuCallocPhysicalShared<char>(4096);
  mscclpp::detail::UniqueGpuPhysicalPtr<char> physicalUnique = mscclpp::detail::gpuCallocPhysicalUnique<char>(4096);
  (void)mscclpp::detail::getMulticastGranularity(4096, CU_MULTICAST_GRANULARITY_RECOMMENDED);
  (void)mscclpp::detail::getCuAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
#endif
  mscclpp::GpuBuffer<float> buffer(16);
  mscclpp::GpuBuffer bytes(64);
  std::shared_ptr<float> memory = buffer.memory();
  (void)(buffer.nelems() + buffer.bytes() + static_cast<size_t>(buffer.deviceId()) + bytes.bytes());
  (void)buffer.data();
  (void)mscclpp::isNvlsSupported();
  // Through env.hpp and utils.hpp.
  (void)mscclpp::env()->logLevel;
  (void)mscclpp::getIBDeviceCount();
}

}  // namespace compat
