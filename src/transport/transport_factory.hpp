// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The only door from the core to the transports. Each transport folder implements one
// TransportFactory; transport_registry.cc maps Transport values to them. Adding a transport is a new
// folder plus one line there: Context, Endpoint, RegisteredMemory and Connection reach a transport only
// through these hooks (endpoints, memory registration and import, per-Context state, connections).

#ifndef MSCCLPP_TRANSPORT_TRANSPORT_FACTORY_HPP_
#define MSCCLPP_TRANSPORT_TRANSPORT_FACTORY_HPP_

#include <memory>
#include <mscclpp/core.hpp>

#include "common/serialization.hpp"
#include "memory/registered_memory.hpp"
#include "memory/transport_memory.hpp"
#include "transport/endpoint_impl.hpp"

namespace mscclpp {

class BaseConnection;

/// What a transport keeps per Context (streams, device contexts, registries), made on first use by its
/// factory and destroyed with the Context. Reached through Context::Impl::transportState.
class TransportContextState {
 public:
  virtual ~TransportContextState() = default;
};

class TransportFactory {
 public:
  virtual ~TransportFactory() = default;

  /// The transport's per-Context state, or nullptr when it keeps none. Called at most once per
  /// (Context, Transport), under no lock of the Context's.
  virtual std::unique_ptr<TransportContextState> createContextState(Context& context, Transport transport) const {
    return nullptr;
  }

  /// Registers local memory (its common fields already set in `memory`) for `transport`: checks that the
  /// transport can reach this kind of memory (Error(InvalidUsage) otherwise) and returns what peers need
  /// to reach it, or nullptr when the common fields suffice.
  virtual std::shared_ptr<TransportMemory> registerMemory(Context& context, Transport transport,
                                                          const RegisteredMemoryAccess::Impl& memory) const {
    return nullptr;
  }

  /// Reads the entry that this transport's TransportMemory::serialize wrote into a peer's serialized
  /// memory (`memory` holds the common fields, already read). Checks only; mapping waits for
  /// TransportMemory::import. Transports that write no entry keep this default, which refuses one.
  virtual std::shared_ptr<TransportMemory> readMemory(ByteReader& reader, Transport transport,
                                                      const RegisteredMemoryAccess::Impl& memory) const;

  /// Creates the transport's part of a local endpoint (e.g. starts listening).
  virtual std::shared_ptr<TransportEndpoint> createEndpoint(Context& context, const EndpointConfig& config) const = 0;

  /// Reads the transport's part of a serialized endpoint (the peer's).
  virtual std::shared_ptr<TransportEndpoint> readEndpoint(ByteReader& reader, const EndpointConfig& config) const = 0;

  /// Whether endpoints of transports `local` and `remote` can connect: symmetric by contract.
  virtual bool compatible(Transport local, Transport remote) const { return local == remote; }

  /// Connects; both sides call this with their own endpoint first.
  virtual std::shared_ptr<BaseConnection> connect(std::shared_ptr<Context> context, const Endpoint& local,
                                                  const Endpoint& remote) const = 0;
};

/// The factory of `transport`; throws Error(InvalidUsage) for a transport this build lacks.
const TransportFactory& transportFactory(Transport transport);

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_TRANSPORT_FACTORY_HPP_
