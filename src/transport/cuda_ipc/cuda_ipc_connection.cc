// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/cuda_ipc/cuda_ipc_connection.hpp"

#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "gpu/driver_api.hpp"
#include "memory/registered_memory.hpp"
#include "transport/context_impl.hpp"

namespace mscclpp {

CudaIpcConnection::CudaIpcConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote)
    : BaseConnection(std::move(context), local, remote),
      stream_(ContextAccess::impl(*context_).ipcStream(localConfig_.device.id)) {}

void CudaIpcConnection::writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src,
                                      uint64_t srcOffset, uint64_t size) {
  char* to = static_cast<char*>(dst.data());
  MSCCLPP_CHECK_USAGE(to != nullptr, "CudaIpc write: the destination is not mapped in this process");
  const char* from = static_cast<const char*>(src.data());
  CudaDeviceGuard guard(localConfig_.device.id);
  MSCCLPP_CUDATHROW(cudaMemcpyAsync(to + dstOffset, from + srcOffset, size, cudaMemcpyDeviceToDevice, stream_));
  dirty_ = true;
}

void CudaIpcConnection::updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                                              uint64_t newValue) {
  char* to = static_cast<char*>(dst.data());
  MSCCLPP_CHECK_USAGE(to != nullptr, "CudaIpc updateAndSync: the destination is not mapped in this process");
  *src = newValue;
  CudaDeviceGuard guard(localConfig_.device.id);
  if (streamWritesWork_) {
    // A stream write carries the value in the command itself: no staging copy of host memory, and the
    // default flags fence it after everything issued before it on the stream (the data of earlier
    // writes). It is the cheap path for the proxy's signals.
    CUresult result = cu::cuStreamWriteValue64(reinterpret_cast<CUstream>(stream_),
                                               reinterpret_cast<CUdeviceptr>(to + dstOffset), newValue,
                                               CU_STREAM_WRITE_VALUE_DEFAULT);
    if (result == CUDA_SUCCESS) {
      dirty_ = true;
      return;
    }
    streamWritesWork_ = false;
    LOG_INFO(CONN, describe(), ": stream memory writes unavailable (", cuResultName(result),
             "); signals use host-to-device copies");
  }
  // `src` is pageable host memory: the copy is staged before cudaMemcpyAsync returns, so the caller may
  // change *src right after.
  MSCCLPP_CUDATHROW(cudaMemcpyAsync(to + dstOffset, src, sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
  dirty_ = true;
}

void CudaIpcConnection::flushFromUser(int64_t) {
  if (!dirty_.exchange(false)) return;
  CudaDeviceGuard guard(localConfig_.device.id);
  MSCCLPP_CUDATHROW(cudaStreamSynchronize(stream_));
}

}  // namespace mscclpp
