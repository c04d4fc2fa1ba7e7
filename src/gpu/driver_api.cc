// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "gpu/driver_api.hpp"

#include "common/strings.hpp"

namespace mscclpp {

#if !defined(__HIP_PLATFORM_AMD__)

namespace {

DriverApi loadDriverApi() {
  DriverApi api;
  // The prototypes in cuda.h are those of this toolkit's version, so ask for the same ABI version.
  const unsigned int version = CUDA_VERSION;
  std::string missing;
  cudaError_t firstError = cudaSuccess;
#define MSCCLPP_DRIVER_LOAD(name, hipName)                                                               \
  {                                                                                                      \
    void* fn = nullptr;                                                                                  \
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;                         \
    cudaError_t err = cudaGetDriverEntryPointByVersion(#name, &fn, version, cudaEnableDefault, &status); \
    if (err == cudaSuccess && status == cudaDriverEntryPointSuccess && fn != nullptr) {                  \
      api.name = reinterpret_cast<decltype(api.name)>(fn);                                               \
    } else {                                                                                             \
      if (firstError == cudaSuccess) firstError = err;                                                   \
      missing += (missing.empty() ? "" : ",") + std::string(#name);                                      \
    }                                                                                                    \
  }
  MSCCLPP_FOR_EACH_DRIVER_SYMBOL(MSCCLPP_DRIVER_LOAD)
  MSCCLPP_DRIVER_LOAD(cuGetErrorName, none)
  MSCCLPP_DRIVER_LOAD(cuGetErrorString, none)
  MSCCLPP_DRIVER_LOAD(cuMemGetHandleForAddressRange, none)
#undef MSCCLPP_DRIVER_LOAD
  // Clear the sticky "no driver" error that the failed queries may have left for the runtime.
  cudaGetLastError();
  if (!missing.empty()) {
    api.unavailableReason =
        concat("CUDA driver entry points unavailable (", missing,
               "): ", firstError == cudaSuccess ? "symbol not found in this driver" : cudaGetErrorString(firstError));
  }
  return api;
}

}  // namespace

const DriverApi& driverApi() {
  static const DriverApi api = loadDriverApi();
  return api;
}

const std::string& driverUnavailableReason() { return driverApi().unavailableReason; }

std::string cuResultName(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (driverApi().cuGetErrorName) driverApi().cuGetErrorName(result, &name);
  if (driverApi().cuGetErrorString) driverApi().cuGetErrorString(result, &text);
  if (result == CUDA_ERROR_NOT_FOUND && !driverUnavailableReason().empty()) {
    return concat(name ? name : "CUDA_ERROR_NOT_FOUND", " (", driverUnavailableReason(), ")");
  }
  return concat(name ? name : "CUresult " + std::to_string(static_cast<int>(result)), " (",
                text ? text : "no description: CUDA driver not loaded", ")");
}

#else  // HIP: the runtime library is linked, so there is nothing to resolve.

const std::string& driverUnavailableReason() {
  static const std::string none;
  return none;
}

std::string cuResultName(CUresult result) {
  return concat(hipGetErrorName(result), " (", hipGetErrorString(result), ")");
}

#endif  // !defined(__HIP_PLATFORM_AMD__)

}  // namespace mscclpp
