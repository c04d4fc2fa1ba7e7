// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_TRANSPORT_MEMORY_HPP_
#define MSCCLPP_MEMORY_TRANSPORT_MEMORY_HPP_

#include <mscclpp/core.hpp>

#include "common/serialization.hpp"
#include "memory/access.hpp"

namespace mscclpp {

/// One transport's part of a RegisteredMemory: what that transport needs to reach the memory (an IPC
/// export, an RDMA memory region). Made by the transport's factory (transport/transport_factory.hpp)
/// when memory is registered here, or read back from a peer's serialized memory. The memory layer keeps
/// and serializes these without knowing which transports exist.
class TransportMemory {
 public:
  virtual ~TransportMemory() = default;

  virtual Transport transport() const = 0;

  /// Writes what the transport's factory reads back on the peer (TransportFactory::readMemory).
  virtual void serialize(ByteWriter& writer) const = 0;

  /// Makes the peer's memory reachable from this process where this transport can (maps it) and returns
  /// its local address, or nullptr. Called once per deserialized entry, after the whole serialized form
  /// has been read and checked, and never for memory of this process.
  virtual void* import(const RegisteredMemoryAccess::Impl& memory) { return nullptr; }
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_TRANSPORT_MEMORY_HPP_
