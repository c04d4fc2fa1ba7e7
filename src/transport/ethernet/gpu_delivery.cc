// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/gpu_delivery.hpp"

#include <algorithm>
#include <mscclpp/gpu_utils.hpp>

#include "common/logger.hpp"
#include "gpu/gpu_checks.hpp"
#include "transport/ethernet/ethernet_connection.hpp"

namespace mscclpp {

GpuDelivery::GpuDelivery(StagingBuffer& staging) : staging_(staging) {}

GpuDelivery::~GpuDelivery() { release(); }

void GpuDelivery::release() noexcept {
  if (!stream_) return;
  try {
    CudaDeviceGuard guard(deviceId_);
    MSCCLPP_CUDA_IGNORE(cudaStreamSynchronize(*stream_));
    copied_.clear();
    stream_.reset();
  } catch (const BaseError& e) {
    LOG_WARN(CONN, "Ethernet receiver: releasing GPU ", deviceId_, "'s stream: ", e.what());
  }
  deviceId_ = -1;
  pending_ = false;
}

void GpuDelivery::use(int deviceId) {
  if (deviceId == deviceId_) return;
  // A connection delivering to a second GPU is rare: finish with the first one, then move over.
  release();
  CudaDeviceGuard guard(deviceId);
  // All or nothing: after a failure the next call tries this GPU again.
  auto stream = std::make_unique<CudaStreamWithFlags>(cudaStreamNonBlocking);
  std::vector<CudaEvent> copied;
  for (int half = 0; half < kHalves; ++half) copied.emplace_back(cudaEventDisableTiming);
  stream_ = std::move(stream);
  copied_ = std::move(copied);
  deviceId_ = deviceId;
}

void GpuDelivery::write(int deviceId, char* dst, uint64_t bytes, const Receive& receive) {
  use(deviceId);
  CudaDeviceGuard guard(deviceId);
  const size_t halfBytes = staging_.bytes() / kHalves;
  for (uint64_t done = 0; done < bytes;) {
    const size_t piece = static_cast<size_t>(std::min<uint64_t>(halfBytes, bytes - done));
    const int half = nextHalf_;
    nextHalf_ = (nextHalf_ + 1) % kHalves;
    char* buffer = staging_.get() + half * halfBytes;
    // The half is free once the copy that last read it has finished (at once if none did).
    MSCCLPP_CUDATHROW(cudaEventSynchronize(copied_[half]));
    receive(buffer, piece);
    MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst + done, buffer, piece, cudaMemcpyHostToDevice, *stream_));
    MSCCLPP_CUDATHROW(cudaEventRecord(copied_[half], *stream_));
    pending_ = true;
    done += piece;
  }
}

void GpuDelivery::update(int deviceId, uint64_t* dst, uint64_t value) {
  use(deviceId);
  CudaDeviceGuard guard(deviceId);
  valueWriter_.write(*stream_, dst, value, &valueStaging_);
  pending_ = true;
}

bool GpuDelivery::done() {
  if (!pending_) return true;
  CudaDeviceGuard guard(deviceId_);
  cudaError_t status = cudaStreamQuery(*stream_);
  if (status == cudaErrorNotReady) return false;
  MSCCLPP_CUDATHROW(status);
  pending_ = false;
  return true;
}

void GpuDelivery::drain() {
  if (!pending_) return;
  CudaDeviceGuard guard(deviceId_);
  MSCCLPP_CUDATHROW(cudaStreamSynchronize(*stream_));
  pending_ = false;
}

}  // namespace mscclpp
