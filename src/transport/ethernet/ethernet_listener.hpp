// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_LISTENER_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_LISTENER_HPP_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

#include "bootstrap/handshake_acceptor.hpp"
#include "bootstrap/socket.hpp"

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
/// the ones not yet asked for are kept until their connect() claims them. Anyone can connect to the
/// port, so what a stranger can hold is bounded: hellos are read together (HandshakeAcceptor: at most
/// kMaxPendingHellos, each for kHelloTimeout), and connections with a valid hello that no connect()
/// has claimed are at most kMaxUnclaimed, each kept until the connect deadline
/// (MSCCLPP_BOOTSTRAP_TIMEOUT). Thread-safe: one waiter at a time polls, the others wait for it.
class EthernetListener {
 public:
  static constexpr size_t kMaxPendingHellos = 256;
  static constexpr size_t kMaxUnclaimed = 256;
  static constexpr std::chrono::milliseconds kHelloTimeout{2000};

  explicit EthernetListener(TcpListener listener);
  SocketAddress address() const { return listener_.address(); }
  /// The connection whose hello carries `peerNonce`; others accepted meanwhile are kept, strays dropped.
  /// Throws Error(Timeout) at the deadline and Error(Aborted) soon after `*cancel` becomes true.
  TcpSocket acceptFrom(uint64_t peerNonce, const Deadline& deadline, const std::atomic<bool>& cancel);

 private:
  struct Unclaimed {
    TcpSocket socket;
    Deadline expiry;
  };
  /// Keeps a connection with a valid hello for its connect() to claim (under mutex_).
  void keep(HandshakeAcceptor::Accepted accepted);
  void expireUnclaimed();

  TcpListener listener_;
  HandshakeAcceptor acceptor_;  // used by the polling waiter only, outside mutex_
  std::mutex mutex_;
  std::condition_variable cv_;
  bool polling_ = false;
  std::map<uint64_t, Unclaimed> unclaimed_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_LISTENER_HPP_
