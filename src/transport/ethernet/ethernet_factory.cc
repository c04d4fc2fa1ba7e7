// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/ethernet_factory.hpp"

#include <sys/socket.h>

#include <mscclpp/env.hpp>
#include <random>

#include "common/checks.hpp"
#include "transport/ethernet/ethernet_connection.hpp"
#include "transport/ethernet/ethernet_endpoint.hpp"

namespace mscclpp {
namespace {

// How long an accepted socket may take to send its hello before it is dropped as a stray.
constexpr std::chrono::milliseconds kHelloTimeout(2000);
// Accepts wait in slices of this length, checking for cancellation in between.
constexpr std::chrono::milliseconds kAcceptSlice(100);

uint64_t randomNonce() {
  static std::mutex mutex;
  static std::mt19937_64 rng(std::random_device{}());
  std::lock_guard<std::mutex> lock(mutex);
  return rng();
}

Deadline connectDeadline() { return Deadline::fromTimeoutSec(env()->bootstrapTimeoutSec); }

class EthernetFactory : public TransportFactory {
 public:
  std::shared_ptr<TransportEndpoint> createEndpoint(Context&, const EndpointConfig&) const override {
    auto listener = std::make_shared<EthernetListener>(TcpListener::listen(localInterfaceAddress()));
    return std::make_shared<EthernetEndpoint>(std::move(listener), randomNonce());
  }

  std::shared_ptr<TransportEndpoint> readEndpoint(ByteReader& reader, const EndpointConfig&) const override {
    SocketAddress address = reader.get<SocketAddress>("Ethernet address");
    if (address.sa.sa_family != AF_INET && address.sa.sa_family != AF_INET6) {
      reader.fail(concat("Ethernet address family ", address.sa.sa_family, " is not IPv4 or IPv6"));
    }
    uint64_t nonce = reader.get<uint64_t>("Ethernet nonce");
    return std::make_shared<EthernetEndpoint>(address, nonce);
  }

  std::shared_ptr<BaseConnection> connect(std::shared_ptr<Context> context, const Endpoint& local,
                                          const Endpoint& remote) const override {
    auto& localData = static_cast<const EthernetEndpoint&>(*EndpointAccess::impl(local)->transportData);
    auto& remoteData = static_cast<const EthernetEndpoint&>(*EndpointAccess::impl(remote)->transportData);
    MSCCLPP_CHECK_USAGE(localData.listener() != nullptr, "Ethernet connect: the local endpoint is a remote one");
    const Deadline deadline = connectDeadline();
    // Only the outgoing stream is made here (the peer's kernel completes the TCP handshake from its
    // listen backlog, whatever the peer is doing). The incoming one is accepted by the connection's
    // receiver thread, so connect() never waits for the peer to call connect() too, and the order in
    // which ranks complete their connections cannot deadlock.
    TcpSocket out = TcpSocket::connect(remoteData.address(), deadline, "Ethernet peer endpoint");
    EthernetHello hello{kEthernetMagic, localData.nonce()};
    out.sendAll(&hello, sizeof(hello), deadline);
    LOG_INFO(CONN, "Ethernet connection ", toString(localData.address()), " -> ", toString(remoteData.address()),
             " connected");
    return std::make_shared<EthernetConnection>(std::move(context), local, remote, std::move(out),
                                                localData.listener(), remoteData.nonce(), deadline);
  }
};

}  // namespace

TcpSocket EthernetListener::acceptFrom(uint64_t peerNonce, const Deadline& deadline,
                                       const std::atomic<bool>& cancel) {
  for (;;) {
    if (cancel) MSCCLPP_THROW(Aborted, "Ethernet endpoint ", toString(listener_.address()), ": connect cancelled");
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(peerNonce);
    if (it != pending_.end()) {
      TcpSocket socket = std::move(it->second);
      pending_.erase(it);
      return socket;
    }
    // Wait in short slices so that a cancel is seen promptly and other waiters get the lock.
    TcpSocket socket;
    try {
      socket = listener_.accept(Deadline::after(std::min(kAcceptSlice, deadline.remaining())));
    } catch (const Error& e) {
      if (e.getErrorCode() != ErrorCode::Timeout || !deadline.expired()) {
        if (e.getErrorCode() == ErrorCode::Timeout) continue;
        throw;
      }
      MSCCLPP_THROW(Timeout, "Ethernet endpoint ", toString(listener_.address()),
                    ": the peer did not connect in time");
    }
    std::string from = toString(socket.peer());
    EthernetHello hello{};
    try {
      socket.recvAll(&hello, sizeof(hello), Deadline::after(std::min(kHelloTimeout, deadline.remaining())));
    } catch (const Error& e) {
      LOG_WARN(CONN, "Ethernet endpoint ", toString(listener_.address()), ": dropped a connection from ", from,
               " that sent no hello: ", e.what());
      continue;
    }
    if (hello.magic != kEthernetMagic) {
      LOG_WARN(CONN, "Ethernet endpoint ", toString(listener_.address()), ": dropped a connection from ", from,
               " with a wrong magic number");
      continue;
    }
    if (hello.nonce == peerNonce) return socket;
    pending_[hello.nonce] = std::move(socket);
  }
}

const TransportFactory& ethernetTransportFactory() {
  static const EthernetFactory factory;
  return factory;
}

}  // namespace mscclpp
