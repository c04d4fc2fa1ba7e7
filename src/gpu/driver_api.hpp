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

#include <mscclpp/gpu.hpp>
#include <string>
#include <utility>

#if !defined(__HIP_PLATFORM_AMD__)

#define MSCCLPP_FOR_EACH_DRIVER_SYMBOL(X) \
  X(cuGetErrorName)                       \
  X(cuGetErrorString)                     \
  X(cuDeviceGet)                          \
  X(cuDeviceGetAttribute)                 \
  X(cuCtxGetCurrent)                      \
  X(cuCtxGetDevice)                       \
  X(cuPointerGetAttribute)                \
  X(cuMemGetAddressRange)                 \
  X(cuMemGetAllocationGranularity)        \
  X(cuMemCreate)                          \
  X(cuMemRelease)                         \
  X(cuMemAddressReserve)                  \
  X(cuMemAddressFree)                     \
  X(cuMemMap)                             \
  X(cuMemUnmap)                           \
  X(cuMemSetAccess)                       \
  X(cuMemRetainAllocationHandle)          \
  X(cuMemGetAllocationPropertiesFromHandle) \
  X(cuMemExportToShareableHandle)         \
  X(cuMemImportFromShareableHandle)       \
  X(cuMemGetHandleForAddressRange)         \
  X(cuStreamWriteValue64)

namespace mscclpp {

struct DriverApi {
#define MSCCLPP_DRIVER_FIELD(name) decltype(&::name) name = nullptr;
  MSCCLPP_FOR_EACH_DRIVER_SYMBOL(MSCCLPP_DRIVER_FIELD)
#undef MSCCLPP_DRIVER_FIELD
  /// Empty when every symbol resolved; otherwise what failed (no driver, old driver, which symbol).
  std::string unavailableReason;
};

/// The table, resolved once (thread-safe).
const DriverApi& driverApi();

/// Why driver calls cannot be made here, or "" when they can.
const std::string& driverUnavailableReason();

/// "CUDA_ERROR_NOT_PERMITTED (operation not permitted)", decoded through the driver when it is there.
std::string cuResultName(CUresult result);

namespace cu {
#define MSCCLPP_DRIVER_WRAPPER(name)                           \
  template <typename... Args>                                  \
  CUresult name(Args&&... args) {                              \
    auto fn = ::mscclpp::driverApi().name;                     \
    if (fn == nullptr) return CUDA_ERROR_NOT_FOUND;            \
    return fn(std::forward<Args>(args)...);                    \
  }
MSCCLPP_FOR_EACH_DRIVER_SYMBOL(MSCCLPP_DRIVER_WRAPPER)
#undef MSCCLPP_DRIVER_WRAPPER
}  // namespace cu

}  // namespace mscclpp

#endif  // !defined(__HIP_PLATFORM_AMD__)

#endif  // MSCCLPP_GPU_DRIVER_API_HPP_
