// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "gpu/cuda_event.hpp"

#include <mscclpp/gpu_utils.hpp>
#include <utility>

#include "gpu/gpu_checks.hpp"

namespace mscclpp {

CudaEvent::CudaEvent(unsigned int flags) { MSCCLPP_CUDATHROW(cudaEventCreateWithFlags(&event_, flags)); }

CudaEvent::~CudaEvent() { destroy(); }

CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    destroy();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void CudaEvent::destroy() noexcept {
  // CUDA lets an event go while work that records or waits on it is still pending.
  if (event_ != nullptr) MSCCLPP_CUDA_IGNORE(cudaEventDestroy(event_));
  event_ = nullptr;
}

}  // namespace mscclpp
