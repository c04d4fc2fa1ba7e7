// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_ENDPOINT_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_ENDPOINT_HPP_

#include <cstdint>
#include <memory>

#include "bootstrap/socket.hpp"
#include "transport/endpoint_impl.hpp"
#include "transport/ethernet/ethernet_listener.hpp"

namespace mscclpp {

class EthernetEndpoint : public TransportEndpoint {
 public:
  /// Local: listening.
  EthernetEndpoint(std::shared_ptr<EthernetListener> listener, uint64_t nonce)
      : listener_(std::move(listener)), address_(listener_->address()), nonce_(nonce) {}
  /// Remote: described only.
  EthernetEndpoint(const SocketAddress& address, uint64_t nonce) : address_(address), nonce_(nonce) {}

  void serialize(ByteWriter& writer) const override { writer.put(address_).put(nonce_); }

  const std::shared_ptr<EthernetListener>& listener() const { return listener_; }
  const SocketAddress& address() const { return address_; }
  uint64_t nonce() const { return nonce_; }

 private:
  std::shared_ptr<EthernetListener> listener_;
  SocketAddress address_;
  uint64_t nonce_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_ENDPOINT_HPP_
