// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_MEMORY_HPP_
#define MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_MEMORY_HPP_

#include <map>
#include <memory>
#include <mscclpp/gpu_utils.hpp>
#include <mutex>

#include "memory/gpu_ipc_mem.hpp"
#include "memory/memory_accounting.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

/// CudaIpc's part of a RegisteredMemory. Registered here: the export peers import, counted in the
/// Context's memoryUsage().exportedHandles while it lives. Read from a peer: its handle, and after
/// import() the mapping the memory's `data` points into.
class CudaIpcMemory : public TransportMemory {
 public:
  CudaIpcMemory(std::shared_ptr<GpuIpcExport> exported, MemoryAccounting::Charge charge)
      : export_(std::move(exported)), handle_(export_->handle()), charge_(std::move(charge)) {}
  explicit CudaIpcMemory(const GpuIpcMemHandle& handle) : handle_(handle) {}

  Transport transport() const override { return Transport::CudaIpc; }
  void serialize(ByteWriter& writer) const override { writeGpuIpcMemHandle(writer, handle_); }
  void* import(const RegisteredMemoryAccess::Impl& memory) override;

 private:
  std::shared_ptr<GpuIpcExport> export_;
  GpuIpcMemHandle handle_;
  MemoryAccounting::Charge charge_;
  std::shared_ptr<GpuIpcMem> import_;
};

/// CudaIpc's per-Context state: the stream its connections copy on, one per GPU.
class CudaIpcContextState : public TransportContextState {
 public:
  /// Created on first use; the legacy default stream when MSCCLPP_CUDAIPC_USE_DEFAULT_STREAM is set.
  cudaStream_t stream(int deviceId);

 private:
  std::mutex mutex_;
  std::map<int, std::unique_ptr<CudaStreamWithFlags>> streams_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_MEMORY_HPP_
