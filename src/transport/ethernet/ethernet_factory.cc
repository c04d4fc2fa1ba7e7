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
    // Connect out first (the peer's kernel completes the TCP handshake from its listen backlog), then
    // accept the peer's connection in: both sides doing the same cannot deadlock.
    TcpSocket out = TcpSocket::connect(remoteData.address(), deadline, "Ethernet peer endpoint");
    EthernetHello hello{kEthernetMagic, localData.nonce()};
    out.sendAll(&hello, sizeof(hello), deadline);
    TcpSocket in = localData.listener()->acceptFrom(remoteData.nonce(), deadline);
    LOG_INFO(CONN, "Ethernet connection ", toString(localData.address()), " <-> ", toString(remoteData.address()),
             " established");
    return std::make_shared<EthernetConnection>(std::move(context), local, remote, std::move(out), std::move(in));
  }
};

}  // namespace

TcpSocket EthernetListener::acceptFrom(uint64_t peerNonce, const Deadline& deadline) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (;;) {
    auto it = pending_.find(peerNonce);
    if (it != pending_.end()) {
      TcpSocket socket = std::move(it->second);
      pending_.erase(it);
      return socket;
    }
    TcpSocket socket = listener_.accept(deadline);
    std::string from = toString(socket.peer());
    EthernetHello hello{};
    try {
      Deadline helloDeadline = Deadline::after(std::min(kHelloTimeout, deadline.remaining()));
      socket.recvAll(&hello, sizeof(hello), helloDeadline);
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
