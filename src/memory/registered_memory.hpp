// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_REGISTERED_MEMORY_HPP_
#define MSCCLPP_MEMORY_REGISTERED_MEMORY_HPP_

#include <memory>
#include <mscclpp/core.hpp>
#include <vector>

#include "common/identity.hpp"
#include "common/serialization.hpp"
#include "memory/access.hpp"
#include "memory/local_memory_registry.hpp"
#include "memory/transport_memory.hpp"

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

  /// The transports' own parts, at most one per transport, in the order they are serialized. Entries of
  /// imported memory own its mapping (the one `data` points into).
  std::vector<std::shared_ptr<TransportMemory>> transportMemories;

  /// The entry of `transport`, or nullptr when that transport keeps none.
  TransportMemory* find(Transport transport) const;

  bool isLocalProcess() const { return hostHash == getHostHash() && pidHash == getPidHash(); }
  bool isLocalHost() const { return hostHash == getHostHash(); }
};

/// Reads TransportFlags written as their u64 bit pattern, rejecting bits of no transport.
TransportFlags readTransportFlags(ByteReader& reader);

/// The fields every serialized RegisteredMemory starts with (RegisteredMemory::serialize writes them,
/// then the transports' entries); reads them into `memory`, checking each.
void readRegisteredMemoryHeader(ByteReader& reader, RegisteredMemoryAccess::Impl& memory);

/// [offset, offset+size) must lie inside `memory`; throws Error(InvalidUsage) naming `what` otherwise.
void checkRange(const RegisteredMemory& memory, uint64_t offset, uint64_t size, const char* what);

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_REGISTERED_MEMORY_HPP_
