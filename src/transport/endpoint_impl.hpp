// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ENDPOINT_IMPL_HPP_
#define MSCCLPP_TRANSPORT_ENDPOINT_IMPL_HPP_

#include <memory>
#include <mscclpp/core.hpp>

#include "common/serialization.hpp"
#include "transport/access.hpp"

namespace mscclpp {

/// What one transport adds to an Endpoint (a listening address, a queue pair...). Local endpoints
/// own live resources through it; deserialized ones only describe the peer's.
class TransportEndpoint {
 public:
  virtual ~TransportEndpoint() = default;
  virtual void serialize(ByteWriter& writer) const = 0;
};

struct Endpoint::Impl {
  EndpointConfig config;
  uint64_t hostHash = 0;
  uint64_t pidHash = 0;
  /// Set for endpoints created here; null for deserialized (remote) ones.
  std::weak_ptr<Context> context;
  std::shared_ptr<TransportEndpoint> transportData;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ENDPOINT_IMPL_HPP_
