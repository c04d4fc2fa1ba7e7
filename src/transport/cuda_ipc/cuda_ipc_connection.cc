// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/cuda_ipc/cuda_ipc_connection.hpp"

#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "memory/registered_memory.hpp"
#include "transport/context_impl.hpp"
#include "transport/cuda_ipc/cuda_ipc_memory.hpp"

namespace mscclpp {

CudaIpcConnection::CudaIpcConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote)
    : BaseConnection(std::move(context), local, remote),
      stream_(ContextAccess::impl(*context_)
                  .transportState<CudaIpcContextState>(*context_, Transport::CudaIpc)
                  .stream(localConfig_.device.id)),
      valueWriter_(describe()) {}

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
  CudaDeviceGuard guard(localConfig_.device.id);
  valueWriter_.write(stream_, reinterpret_cast<uint64_t*>(to + dstOffset), newValue, src);
  dirty_ = true;
}

void CudaIpcConnection::flushFromUser(int64_t) {
  if (!dirty_.exchange(false)) return;
  CudaDeviceGuard guard(localConfig_.device.id);
  MSCCLPP_CUDATHROW(cudaStreamSynchronize(stream_));
}

}  // namespace mscclpp
