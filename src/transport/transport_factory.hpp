// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The only door from the core to the transports. Each transport folder implements one
// TransportFactory; transport_registry.cc maps Transport values to them. Adding a transport is a new
// folder plus one line there.

#ifndef MSCCLPP_TRANSPORT_TRANSPORT_FACTORY_HPP_
#define MSCCLPP_TRANSPORT_TRANSPORT_FACTORY_HPP_

#include <memory>
#include <mscclpp/core.hpp>

#include "common/serialization.hpp"
#include "transport/endpoint_impl.hpp"

namespace mscclpp {

class BaseConnection;

class TransportFactory {
 public:
  virtual ~TransportFactory() = default;

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
