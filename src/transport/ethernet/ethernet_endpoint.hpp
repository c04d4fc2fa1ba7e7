// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_ENDPOINT_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_ENDPOINT_HPP_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

#include "bootstrap/socket.hpp"
#include "transport/endpoint_impl.hpp"

namespace mscclpp {

/// First bytes of every Ethernet connection: anything else connecting to the port is dropped.
constexpr uint64_t kEthernetMagic = 0x6d7363636c707045ULL;

/// The handshake a connecting side sends: the magic and the nonce of its own endpoint, so the accepting
/// side can tell which of its peers this is.
struct EthernetHello {
  uint64_t magic;
  uint64_t nonce;
};

/// A local Ethernet endpoint's listening socket. Connections from peers may arrive in any order, so
/// the ones not yet asked for are kept until their connect() claims them. Thread-safe.
class EthernetListener {
 public:
  explicit EthernetListener(TcpListener listener) : listener_(std::move(listener)) {}
  SocketAddress address() const { return listener_.address(); }
  /// The connection whose hello carries `peerNonce`; others accepted meanwhile are kept, strays dropped.
  /// Throws Error(Timeout) at the deadline and Error(Aborted) soon after `*cancel` becomes true.
  TcpSocket acceptFrom(uint64_t peerNonce, const Deadline& deadline, const std::atomic<bool>& cancel);

 private:
  std::mutex mutex_;
  TcpListener listener_;
  std::map<uint64_t, TcpSocket> pending_;
};

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
