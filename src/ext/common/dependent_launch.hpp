// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Programmatic dependent launches of the extensions' kernels (collectives and executor alike). On compute
// capability 9.0 and later a kernel launched this way is set up by the GPU while the kernel before it on
// the stream still runs; its first instruction, waitForPriorKernels (griddepcontrol.wait), returns once
// that kernel has completed and its writes are visible, so the order callers see is the stream's. What is
// saved is the launch's own latency, a good part of a collective or a plan execution of a few
// microseconds.
//
// No kernel lets the next one be placed early (griddepcontrol.launch_dependents): a placed block of the
// next call that waits takes an SM that a peer's kernel, sharing the GPU under MPS, may still need to
// finish the current call. A kernel's end allows the next one.
//
// Plain launches where the GPU or the build lacks the feature (HIP, compute capability below 9.0,
// kernels compiled from PTX older than 9.0, which would not hold the wait), or with
// MSCCLPP_DEPENDENT_LAUNCH=0 (Env::dependentLaunch). Included from .cu files only.

#ifndef MSCCLPP_EXT_COMMON_DEPENDENT_LAUNCH_HPP_
#define MSCCLPP_EXT_COMMON_DEPENDENT_LAUNCH_HPP_

#include <mscclpp/device.hpp>
#include <mscclpp/gpu.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <utility>

namespace mscclpp {
namespace ext {

#if defined(MSCCLPP_DEVICE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MSCCLPP_EXT_GRID_DEPENDENCIES 1
#endif

/// Returns once the kernels before this one on its stream have completed and their writes are visible
/// (at once for a plain launch). The first thing every kernel that may be launched dependent does.
__device__ __forceinline__ void waitForPriorKernels() {
#if defined(MSCCLPP_EXT_GRID_DEPENDENCIES)
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Whether `kernel` may be launched dependent on the current device: compute capability 9.0 or later
/// and the kernel built from PTX 9.0 or later.
inline bool launchesDependent(const void* kernel) {
#if defined(MSCCLPP_DEVICE_HIP)
  (void)kernel;
  return false;
#else
  int device = 0, major = 0;
  MSCCLPP_CUDATHROW(cudaGetDevice(&device));
  MSCCLPP_CUDATHROW(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9) return false;
  cudaFuncAttributes attributes = {};
  MSCCLPP_CUDATHROW(cudaFuncGetAttributes(&attributes, kernel));
  return attributes.ptxVersion >= 90;
#endif
}

/// Launches kernel(args...) on `stream`, dependent on the kernel before it where `dependent` (which the
/// caller has checked with launchesDependent), plainly otherwise.
template <typename... Params, typename... Args>
void launchKernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t sharedBytes, cudaStream_t stream,
                  bool dependent, Args&&... args) {
#if defined(MSCCLPP_DEVICE_HIP)
  (void)dependent;
  kernel<<<grid, block, sharedBytes, stream>>>(std::forward<Args>(args)...);
  MSCCLPP_CUDATHROW(cudaGetLastError());
#else
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = sharedBytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent ? 1 : 0;
  MSCCLPP_CUDATHROW(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
#endif
}

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_DEPENDENT_LAUNCH_HPP_
