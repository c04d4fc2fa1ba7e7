// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_REGISTERED_MEMORY_HPP_
#define MSCCLPP_MEMORY_REGISTERED_MEMORY_HPP_

#include <memory>
#include <mscclpp/core.hpp>

#include "common/identity.hpp"
#include "common/serialization.hpp"
#include "memory/gpu_ipc_mem.hpp"
#include "memory/local_memory_registry.hpp"
#include "transport/memory_accounting.hpp"
#include "transport/access.hpp"

namespace mscclpp {

struct RegisteredMemory::Impl {
  /// The address in this process: the original pointer for memory of this process, the mapping for
  /// imported memory, nullptr when it cannot be reached directly (e.g. another host over Ethernet).
  void* data = nullptr;
  void* originalDataPtr = nullptr;
  size_t size = 0;
  uint64_t hostHash = 0;
  uint64_t pidHash = 0;
  TransportFlags transports;
  /// The GPU holding the memory in the registering process, -1 for host memory.
  int deviceId = -1;

  /// Memory registered by this process stays a valid write target for peers while this lives.
  LocalMemoryRegistry::Registration registration;

  /// CudaIpc, registered here: the export peers import (GPU memory of size > 0).
  std::shared_ptr<GpuIpcExport> ipcExport;
  /// Counts the export in its Context's memoryUsage().exportedHandles while it lives.
  MemoryAccounting::Charge exportCharge;
  /// CudaIpc, from a process of this host: the mapping `data` points into.
  std::shared_ptr<GpuIpcMem> ipcImport;

  bool isLocalProcess() const { return hostHash == getHostHash() && pidHash == getPidHash(); }
  bool isLocalHost() const { return hostHash == getHostHash(); }
};

/// Reads TransportFlags written as their u64 bit pattern, rejecting bits of no transport.
TransportFlags readTransportFlags(ByteReader& reader);

/// [offset, offset+size) must lie inside `memory`; throws Error(InvalidUsage) naming `what` otherwise.
void checkRange(const RegisteredMemory& memory, uint64_t offset, uint64_t size, const char* what);

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_REGISTERED_MEMORY_HPP_
