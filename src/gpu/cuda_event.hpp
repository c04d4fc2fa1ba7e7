// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_GPU_CUDA_EVENT_HPP_
#define MSCCLPP_GPU_CUDA_EVENT_HPP_

#include <mscclpp/gpu.hpp>

namespace mscclpp {

/// Owns a cudaEvent_t, created on the current device; destroys it on destruction, logging (never
/// throwing) a failure. Move-only; a moved-from CudaEvent holds no event. Record, wait for and time it
/// with the CUDA calls, through the implicit conversion.
class CudaEvent {
 public:
  /// An event with `flags`: 0 (cudaEventDefault) records timing, for cudaEventElapsedTime;
  /// cudaEventDisableTiming makes it cheaper to record and to wait for, for ordering alone.
  explicit CudaEvent(unsigned int flags = 0);
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  operator cudaEvent_t() const { return event_; }

 private:
  void destroy() noexcept;

  cudaEvent_t event_ = nullptr;
};

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_CUDA_EVENT_HPP_
