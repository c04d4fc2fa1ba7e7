// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/cuda_ipc/cuda_ipc_memory.hpp"

#include <mscclpp/env.hpp>

#include "memory/registered_memory.hpp"

namespace mscclpp {

void* CudaIpcMemory::import(const RegisteredMemoryAccess::Impl& memory) {
  // Another host's memory cannot be mapped; it stays reachable over the network transports.
  if (!memory.isLocalHost()) return nullptr;
  // Maps the peer's memory (once per remote allocation, through the import cache) or throws an Error
  // listing every way that was tried.
  import_ = GpuIpcMem::open(handle_);
  return import_->data();
}

cudaStream_t CudaIpcContextState::stream(int deviceId) {
  if (env()->cudaIpcUseDefaultStream) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto& stream = streams_[deviceId];
  if (!stream) {
    CudaDeviceGuard guard(deviceId);
    stream = std::make_unique<CudaStreamWithFlags>(cudaStreamNonBlocking);
  }
  return *stream;
}

}  // namespace mscclpp
