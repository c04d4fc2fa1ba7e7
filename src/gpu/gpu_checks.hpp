// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Cleanup forms of MSCCLPP_CUDATHROW / MSCCLPP_CUTHROW (public, in gpu_utils.hpp): for destructors and
// unwinding, they log a WARN with the decoded error and continue.

#ifndef MSCCLPP_GPU_GPU_CHECKS_HPP_
#define MSCCLPP_GPU_GPU_CHECKS_HPP_

#include <mscclpp/gpu.hpp>

#include "common/logger.hpp"
#include "gpu/driver_api.hpp"

#define MSCCLPP_CUDA_IGNORE(cmd)                                                                   \
  do {                                                                                             \
    cudaError_t mscclppCudaErr_ = cmd;                                                             \
    if (mscclppCudaErr_ != cudaSuccess) {                                                          \
      cudaGetLastError();                                                                          \
      LOG_WARN(GPU, "'" #cmd "' failed during cleanup: ", cudaGetErrorName(mscclppCudaErr_), " (", \
               cudaGetErrorString(mscclppCudaErr_), ")");                                          \
    }                                                                                              \
  } while (0)

#define MSCCLPP_CU_IGNORE(cmd)                                                                     \
  do {                                                                                             \
    CUresult mscclppCuErr_ = cmd;                                                                  \
    if (mscclppCuErr_ != CUDA_SUCCESS) {                                                           \
      LOG_WARN(GPU, "'" #cmd "' failed during cleanup: ", ::mscclpp::cuResultName(mscclppCuErr_)); \
    }                                                                                              \
  } while (0)

#endif  // MSCCLPP_GPU_GPU_CHECKS_HPP_
