// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <cstring>
#include <mscclpp/env.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/gpu_checks.hpp"

namespace mscclpp {

AvoidCudaGraphCaptureGuard::AvoidCudaGraphCaptureGuard() : mode_(cudaStreamCaptureModeRelaxed), active_(true) {
  // Without a driver there is nothing to capture; the guard then does nothing.
  if (cudaThreadExchangeStreamCaptureMode(&mode_) != cudaSuccess) {
    cudaGetLastError();
    active_ = false;
  }
}

AvoidCudaGraphCaptureGuard::~AvoidCudaGraphCaptureGuard() {
  if (!active_) return;
  MSCCLPP_CUDA_IGNORE(cudaThreadExchangeStreamCaptureMode(&mode_));
}

CudaDeviceGuard::CudaDeviceGuard(int deviceId) : deviceId_(deviceId), origDeviceId_(-1) {
  if (deviceId_ < 0) return;
  MSCCLPP_CUDATHROW(cudaGetDevice(&origDeviceId_));
  if (origDeviceId_ != deviceId_) MSCCLPP_CUDATHROW(cudaSetDevice(deviceId_));
}

CudaDeviceGuard::~CudaDeviceGuard() {
  if (deviceId_ >= 0 && origDeviceId_ >= 0 && origDeviceId_ != deviceId_) {
    MSCCLPP_CUDA_IGNORE(cudaSetDevice(origDeviceId_));
  }
}

CudaStreamWithFlags::CudaStreamWithFlags() : stream_(nullptr), deviceId_(-1) {}

CudaStreamWithFlags::CudaStreamWithFlags(unsigned int flags) : stream_(nullptr), deviceId_(-1) { set(flags); }

CudaStreamWithFlags::~CudaStreamWithFlags() {
  if (empty()) return;
  MSCCLPP_CUDA_IGNORE(cudaStreamDestroy(stream_));
}

void CudaStreamWithFlags::set(unsigned int flags) {
  MSCCLPP_CHECK_USAGE(empty(), "CudaStreamWithFlags::set: the stream already exists");
  MSCCLPP_CUDATHROW(cudaGetDevice(&deviceId_));
  MSCCLPP_CUDATHROW(cudaStreamCreateWithFlags(&stream_, flags));
}

bool CudaStreamWithFlags::empty() const { return stream_ == nullptr; }

GpuStream::GpuStream(std::shared_ptr<GpuStreamPool> pool, std::shared_ptr<CudaStreamWithFlags> stream) {
  CudaStreamWithFlags* raw = stream.get();
  stream_ = std::shared_ptr<CudaStreamWithFlags>(
      raw, [pool = std::move(pool), pooled = std::move(stream)](CudaStreamWithFlags*) mutable noexcept {
        try {
          std::lock_guard<std::mutex> lock(pool->mutex_);
          pool->streams_[pooled->deviceId()].push_back(std::move(pooled));
        } catch (const std::exception& e) {
          // Out of memory for the list: the stream is destroyed with `pooled` instead of reused.
          LOG_WARN(GPU, "GpuStream: could not return a stream to its pool: ", e.what());
        }
      });
}

GpuStreamPool::GpuStreamPool() {}

GpuStream GpuStreamPool::getStream() {
  int deviceId;
  MSCCLPP_CUDATHROW(cudaGetDevice(&deviceId));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& free = streams_[deviceId];
    if (!free.empty()) {
      auto stream = std::move(free.back());
      free.pop_back();
      return GpuStream(shared_from_this(), std::move(stream));
    }
  }
  return GpuStream(shared_from_this(), std::make_shared<CudaStreamWithFlags>(cudaStreamNonBlocking));
}

void GpuStreamPool::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.clear();
}

std::shared_ptr<GpuStreamPool> gpuStreamPool() {
  // Never destroyed: streams must not be destroyed after the CUDA runtime has shut down at exit.
  static auto* pool = new std::shared_ptr<GpuStreamPool>(std::make_shared<GpuStreamPool>());
  return *pool;
}

namespace detail {

namespace {

CUmemAllocationProp exportableProp(int deviceId, bool withFabric) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = deviceId;
  unsigned types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  if (withFabric) types |= CU_MEM_HANDLE_TYPE_FABRIC;
  requestedHandleTypes(prop) = static_cast<CUmemAllocationHandleType>(types);
  return prop;
}

int currentDevice() {
  int deviceId;
  MSCCLPP_CUDATHROW(cudaGetDevice(&deviceId));
  return deviceId;
}

}  // namespace

void setReadWriteMemoryAccess(void* base, size_t size) {
  int owner = gpuIdFromAddress(base);
  int count = gpuCapabilities().deviceCount;
  std::vector<CUmemAccessDesc> descs;
  for (int d = 0; d < count; ++d) {
    int canAccess = (d == owner) ? 1 : 0;
    if (d != owner && owner >= 0) MSCCLPP_CUDATHROW(cudaDeviceCanAccessPeer(&canAccess, d, owner));
    if (!canAccess) continue;
    CUmemAccessDesc desc = {};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = d;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    descs.push_back(desc);
  }
  MSCCLPP_CUTHROW(cu::cuMemSetAccess(reinterpret_cast<CUdeviceptr>(base), size, descs.data(), descs.size()));
}

int gpuIdFromAddress(void* ptr) {
  cudaPointerAttributes attrs;
  if (cudaPointerGetAttributes(&attrs, ptr) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return isDeviceMemory(attrs) ? attrs.device : -1;
}

void* gpuCalloc(size_t bytes) {
  AvoidCudaGraphCaptureGuard captureGuard;
  void* ptr = nullptr;
  MSCCLPP_CUDATHROW(cudaMalloc(&ptr, bytes));
  try {
    gpuMemset(ptr, 0, bytes);
  } catch (...) {
    MSCCLPP_CUDA_IGNORE(cudaFree(ptr));
    throw;
  }
  return ptr;
}

void* gpuCallocHost(size_t bytes, unsigned int flags) {
  AvoidCudaGraphCaptureGuard captureGuard;
  void* ptr = nullptr;
  MSCCLPP_CUDATHROW(cudaHostAlloc(&ptr, bytes, flags));
  std::memset(ptr, 0, bytes);
  return ptr;
}

void* gpuCallocPhysical(size_t bytes, size_t gran, size_t align) {
  AvoidCudaGraphCaptureGuard captureGuard;
  const int deviceId = currentDevice();
  CUmemAllocationProp prop = exportableProp(deviceId, fabricHandlesUsable(deviceId));
  if (gran == 0) MSCCLPP_CUTHROW(cu::cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (align == 0) align = gran;
  const size_t size = (bytes + gran - 1) / gran * gran;

  CUmemGenericAllocationHandle handle;
  MSCCLPP_CUTHROW(cu::cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr ptr{};
  CUresult res = cu::cuMemAddressReserve(&ptr, size, align, CUdeviceptr{}, 0);
  if (res != CUDA_SUCCESS) {
    MSCCLPP_CU_IGNORE(cu::cuMemRelease(handle));
    throw CuError(concat("gpuCallocPhysical: cuMemAddressReserve of ", size, " bytes failed"), res);
  }
  res = cu::cuMemMap(ptr, size, 0, handle, 0);
  if (res != CUDA_SUCCESS) {
    MSCCLPP_CU_IGNORE(cu::cuMemAddressFree(ptr, size));
    MSCCLPP_CU_IGNORE(cu::cuMemRelease(handle));
    throw CuError(concat("gpuCallocPhysical: cuMemMap of ", size, " bytes failed"), res);
  }
  // The mapping now holds the allocation: dropping our handle makes unmapping free it.
  MSCCLPP_CU_IGNORE(cu::cuMemRelease(handle));
  void* result = reinterpret_cast<void*>(ptr);
  try {
    setReadWriteMemoryAccess(result, size);
    gpuMemset(result, 0, size);
  } catch (...) {
    gpuFreePhysical(result);
    throw;
  }
  return result;
}

void gpuFree(void* ptr) {
  if (!ptr) return;
  AvoidCudaGraphCaptureGuard captureGuard;
  MSCCLPP_CUDA_IGNORE(cudaFree(ptr));
}

void gpuFreeHost(void* ptr) {
  if (!ptr) return;
  AvoidCudaGraphCaptureGuard captureGuard;
  MSCCLPP_CUDA_IGNORE(cudaFreeHost(ptr));
}

void gpuFreePhysical(void* ptr) {
  if (!ptr) return;
  AvoidCudaGraphCaptureGuard captureGuard;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (cu::cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    LOG_WARN(GPU, "gpuFreePhysical: ", ptr, " is not a cuMem mapping; nothing freed");
    return;
  }
  MSCCLPP_CU_IGNORE(cu::cuMemUnmap(base, size));
  MSCCLPP_CU_IGNORE(cu::cuMemAddressFree(base, size));
}

void gpuMemcpyAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream, cudaMemcpyKind kind) {
  if (bytes == 0) return;
  MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst, src, bytes, kind, stream));
}

void gpuMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return;
  AvoidCudaGraphCaptureGuard captureGuard;
  GpuStream stream = gpuStreamPool()->getStream();
  MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  MSCCLPP_CUDATHROW(cudaStreamSynchronize(stream));
}

void gpuMemset(void* ptr, int value, size_t bytes) {
  if (bytes == 0) return;
  AvoidCudaGraphCaptureGuard captureGuard;
  CudaDeviceGuard deviceGuard(gpuIdFromAddress(ptr));
  GpuStream stream = gpuStreamPool()->getStream();
  MSCCLPP_CUDATHROW(cudaMemsetAsync(ptr, value, bytes, stream));
  MSCCLPP_CUDATHROW(cudaStreamSynchronize(stream));
}

#if (CUDA_NVLS_API_AVAILABLE)
CUmemAllocationHandleType nvlsCompatibleMemHandleType = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

size_t getMulticastGranularity(size_t, CUmulticastGranularity_flags) {
  MSCCLPP_THROW(InvalidUsage, "getMulticastGranularity: NVLS (multicast) is not supported by this build");
}
#endif

size_t getCuAllocationGranularity(CUmemAllocationGranularity_flags granFlag) {
  const int deviceId = currentDevice();
  CUmemAllocationProp prop = exportableProp(deviceId, fabricHandlesUsable(deviceId));
  size_t gran = 0;
  MSCCLPP_CUTHROW(cu::cuMemGetAllocationGranularity(&gran, &prop, granFlag));
  return gran;
}

std::shared_ptr<void> gpuBufferAllocate(size_t bytes, size_t& allocatedBytes) {
  const int deviceId = currentDevice();
  const GpuCapabilities& caps = gpuCapabilities();
  bool vmm = deviceId < caps.deviceCount && caps.devices[deviceId].virtualMemoryManagement &&
             caps.devices[deviceId].posixFdHandles;
  if (vmm) {
    size_t gran = getCuAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    allocatedBytes = (bytes + gran - 1) / gran * gran;
    return std::shared_ptr<void>(gpuCallocPhysical(bytes, gran), GpuPhysicalDeleter<void>());
  }
  allocatedBytes = bytes;
  return std::shared_ptr<void>(gpuCalloc(bytes), GpuDeleter<void>());
}

}  // namespace detail

void gpuMemset(void* ptr, int value, size_t bytes) { detail::gpuMemset(ptr, value, bytes); }

bool isNvlsSupported() {
  // Creating a multicast object can take every GPU of a shared host out of service, and the library's
  // collectives do not need it; until an NVLS transport exists and is validated it stays off.
  return false;
}

bool isCuMemMapAllocated(void* ptr) {
#if defined(__HIP_PLATFORM_AMD__)
  return false;
#else
  CUmemGenericAllocationHandle handle;
  if (cu::cuMemRetainAllocationHandle(&handle, ptr) != CUDA_SUCCESS) return false;
  MSCCLPP_CU_IGNORE(cu::cuMemRelease(handle));
  return true;
#endif
}

}  // namespace mscclpp
