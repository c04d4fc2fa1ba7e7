// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/gpu.hpp>

namespace compat {

#if !defined(CUDA_NVLS_API_AVAILABLE)
#error "gpu.hpp defines CUDA_NVLS_API_AVAILABLE"
#endif
constexpr bool kNvlsApi = CUDA_NVLS_API_AVAILABLE;

cudaError_t useRuntime(cudaStream_t stream, cudaEvent_t event, CUdeviceptr ptr, CUresult result) {
  if (CU_MEM_HANDLE_TYPE_FABRIC == CUmemAllocationHandleType{}) return cudaSuccess;
  (void)ptr;
  (void)result;
  (void)kNvlsApi;
  return cudaEventRecord(event, stream);
}

#if defined(MSCCLPP_DEVICE_COMPILE)
// Through device.hpp.
__global__ void useSyncshm() { __syncshm(); }
#endif

}  // namespace compat
