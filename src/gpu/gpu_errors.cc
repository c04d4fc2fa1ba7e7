// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/errors.hpp>
#include <mscclpp/gpu.hpp>

#include "gpu/driver_api.hpp"

namespace mscclpp {

CudaError::CudaError(const std::string& message, int errorCode) : BaseError(errorCode) {
  cudaError_t err = static_cast<cudaError_t>(errorCode);
  message_ = message + " (Cuda failure: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")";
}

CuError::CuError(const std::string& message, int errorCode) : BaseError(errorCode) {
#if defined(__HIP_PLATFORM_AMD__)
  message_ = message + " (Cu failure: " + hipGetErrorString(static_cast<hipError_t>(errorCode)) + ")";
#else
  message_ = message + " (Cu failure: " + cuResultName(static_cast<CUresult>(errorCode)) + ")";
#endif
}

}  // namespace mscclpp
