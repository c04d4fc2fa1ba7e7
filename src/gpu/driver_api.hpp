// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// CUDA driver functions, resolved at first use through cudaGetDriverEntryPointByVersion so that the
// library never links libcuda and loads on machines without a driver. This list is the only place that
// names a driver symbol: the table, the loader and the call wrappers are all generated from it.
//
// Call a driver function through the wrapper of the same name in namespace mscclpp::cu, usually inside
// a check: MSCCLPP_CUTHROW(cu::cuMemCreate(&handle, size, &prop, 0)). A symbol that could not be
// resolved makes its wrapper return CUDA_ERROR_NOT_FOUND, and driverUnavailableReason() says why.

#ifndef MSCCLPP_GPU_DRIVER_API_HPP_
#define MSCCLPP_GPU_DRIVER_API_HPP_

#include <cstdint>
#include <mscclpp/gpu.hpp>
#include <string>
#include <utility>

// Each entry names the CUDA driver symbol and the HIP function that does the same. On CUDA the table
// is resolved at run time; on HIP, whose runtime library the application links anyway, the wrappers
// call the HIP functions directly.
#define MSCCLPP_FOR_EACH_DRIVER_SYMBOL(X)                                            \
  X(cuDeviceGet, hipDeviceGet)                                                       \
  X(cuDeviceGetAttribute, hipDeviceGetAttribute)                                     \
  X(cuCtxGetCurrent, hipCtxGetCurrent)                                               \
  X(cuCtxGetDevice, hipCtxGetDevice)                                                 \
  X(cuPointerGetAttribute, hipPointerGetAttribute)                                   \
  X(cuMemGetAddressRange, hipMemGetAddressRange)                                     \
  X(cuMemGetAllocationGranularity, hipMemGetAllocationGranularity)                   \
  X(cuMemCreate, hipMemCreate)                                                       \
  X(cuMemRelease, hipMemRelease)                                                     \
  X(cuMemAddressReserve, hipMemAddressReserve)                                       \
  X(cuMemAddressFree, hipMemAddressFree)                                             \
  X(cuMemMap, hipMemMap)                                                             \
  X(cuMemUnmap, hipMemUnmap)                                                         \
  X(cuMemSetAccess, hipMemSetAccess)                                                 \
  X(cuMemRetainAllocationHandle, hipMemRetainAllocationHandle)                       \
  X(cuMemGetAllocationPropertiesFromHandle, hipMemGetAllocationPropertiesFromHandle) \
  X(cuMemExportToShareableHandle, hipMemExportToShareableHandle)                     \
  X(cuMemImportFromShareableHandle, hipMemImportFromShareableHandle)                 \
  X(cuStreamWriteValue64, hipStreamWriteValue64)

namespace mscclpp {

/// The handle types an allocation property asks for: CUDA names the field requestedHandleTypes, HIP
/// requestedHandleType.
inline CUmemAllocationHandleType& requestedHandleTypes(CUmemAllocationProp& prop) {
#if defined(__HIP_PLATFORM_AMD__)
  return prop.requestedHandleType;
#else
  return prop.requestedHandleTypes;
#endif
}
inline CUmemAllocationHandleType requestedHandleTypes(const CUmemAllocationProp& prop) {
  return requestedHandleTypes(const_cast<CUmemAllocationProp&>(prop));
}

/// Whether pointer attributes describe device memory: HIP 5 names the field memoryType, CUDA type.
inline bool isDeviceMemory(const cudaPointerAttributes& attrs) {
#if defined(__HIP_PLATFORM_AMD__)
  return attrs.memoryType == hipMemoryTypeDevice;
#else
  return attrs.type == cudaMemoryTypeDevice;
#endif
}

/// A driver device pointer as an address: CUdeviceptr is an integer on CUDA, a void* on HIP.
inline uintptr_t deviceAddress(CUdeviceptr ptr) {
#if defined(__HIP_PLATFORM_AMD__)
  return reinterpret_cast<uintptr_t>(ptr);
#else
  return static_cast<uintptr_t>(ptr);
#endif
}

/// The device's UUID (16 bytes), which tells MIG instances of one board apart: CUDA reports it among the
/// device properties, HIP 5 only through hipDeviceGetUuid.
inline cudaError_t deviceUuid(int deviceId, std::string& uuid) {
#if defined(__HIP_PLATFORM_AMD__)
  hipUUID id{};
  const hipError_t err = hipDeviceGetUuid(&id, deviceId);
#else
  cudaDeviceProp prop{};
  const cudaError_t err = cudaGetDeviceProperties(&prop, deviceId);
  const cudaUUID_t& id = prop.uuid;
#endif
  if (err == cudaSuccess) uuid.assign(id.bytes, sizeof(id.bytes));
  return err;
}

/// Why driver calls cannot be made here, or "" when they can.
const std::string& driverUnavailableReason();

/// "CUDA_ERROR_NOT_PERMITTED (operation not permitted)", decoded through the driver when it is there.
std::string cuResultName(CUresult result);

#if !defined(__HIP_PLATFORM_AMD__)

struct DriverApi {
#define MSCCLPP_DRIVER_FIELD(name, hipName) decltype(&::name) name = nullptr;
  MSCCLPP_FOR_EACH_DRIVER_SYMBOL(MSCCLPP_DRIVER_FIELD)
  // Error decoding has a different shape on HIP (hipGetErrorName returns the text), so it stays
  // outside the shared list.
  MSCCLPP_DRIVER_FIELD(cuGetErrorName, none)
  MSCCLPP_DRIVER_FIELD(cuGetErrorString, none)
  // DMA-BUF export of device memory (for IB registration); HIP 5 has no counterpart.
  MSCCLPP_DRIVER_FIELD(cuMemGetHandleForAddressRange, none)
#undef MSCCLPP_DRIVER_FIELD
  /// Empty when every symbol resolved; otherwise what failed (no driver, old driver, which symbol).
  std::string unavailableReason;
};

/// The table, resolved once (thread-safe).
const DriverApi& driverApi();

namespace cu {
#define MSCCLPP_DRIVER_WRAPPER(name, hipName)       \
  template <typename... Args>                       \
  CUresult name(Args&&... args) {                   \
    auto fn = ::mscclpp::driverApi().name;          \
    if (fn == nullptr) return CUDA_ERROR_NOT_FOUND; \
    return fn(std::forward<Args>(args)...);         \
  }
MSCCLPP_FOR_EACH_DRIVER_SYMBOL(MSCCLPP_DRIVER_WRAPPER)
MSCCLPP_DRIVER_WRAPPER(cuMemGetHandleForAddressRange, none)
#undef MSCCLPP_DRIVER_WRAPPER
}  // namespace cu

#else

// HIP has no fabric (cross-node) memory handles. These stand-ins only let the code shared with CUDA
// compile: on HIP the capability probe reports no VMM and no fabric, so no allocation asks for a fabric
// handle, exporters note it as "not offered", and an importer given one fails with HIP's error and
// falls back to the next type.
struct CUmemFabricHandle {
  unsigned char data[64];
};
constexpr auto CU_MEM_HANDLE_TYPE_FABRIC = static_cast<CUmemAllocationHandleType>(0x8);
constexpr auto CUDA_ERROR_NOT_FOUND = hipErrorNotFound;
constexpr auto CUDA_ERROR_OPERATING_SYSTEM = hipErrorOperatingSystem;
constexpr unsigned CU_STREAM_WRITE_VALUE_DEFAULT = 0;
using CUstream = hipStream_t;

namespace cu {
#define MSCCLPP_DRIVER_WRAPPER(name, hipName)      \
  template <typename... Args>                      \
  CUresult name(Args&&... args) {                  \
    return ::hipName(std::forward<Args>(args)...); \
  }
MSCCLPP_FOR_EACH_DRIVER_SYMBOL(MSCCLPP_DRIVER_WRAPPER)
#undef MSCCLPP_DRIVER_WRAPPER
// HIP 5 has no DMA-BUF export of device memory: src/transport/ib/ib_device.cc registers through peer
// memory instead, as on a CUDA GPU without DMA-BUF.
}  // namespace cu

#endif  // !defined(__HIP_PLATFORM_AMD__)

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_DRIVER_API_HPP_
