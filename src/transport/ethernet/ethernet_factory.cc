// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/ethernet_factory.hpp"

#include <sys/socket.h>

#include <mscclpp/env.hpp>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "transport/context_impl.hpp"
#include "transport/ethernet/ethernet_connection.hpp"
#include "transport/ethernet/ethernet_endpoint.hpp"
#include "transport/ethernet/ethernet_memory.hpp"

namespace mscclpp {
namespace {

Deadline connectDeadline() { return Deadline::fromTimeoutSec(env()->bootstrapTimeoutSec); }

class EthernetFactory : public TransportFactory {
 public:
  std::unique_ptr<TransportContextState> createContextState(Context&, Transport) const override {
    return std::make_unique<EthernetContextState>();
  }

  std::shared_ptr<TransportMemory> registerMemory(Context& context, Transport transport,
                                                  const RegisteredMemoryAccess::Impl& memory) const override {
    // Peers of this Context's connections may write only into what is registered here, for Ethernet.
    auto& state = ContextAccess::impl(context).transportState<EthernetContextState>(context, transport);
    uint64_t id = state.registry->add(memory.originalDataPtr, memory.size, memory.deviceId);
    return std::make_shared<EthernetLocalMemory>(state.registry, id);
  }

  std::shared_ptr<TransportMemory> readMemory(ByteReader&, Transport,
                                              const RegisteredMemoryAccess::Impl&) const override {
    return std::make_shared<EthernetRemoteMemory>();
  }

  std::shared_ptr<TransportEndpoint> createEndpoint(Context&, const EndpointConfig&) const override {
    auto listener = std::make_shared<EthernetListener>(TcpListener::listen(localInterfaceAddress()));
    return std::make_shared<EthernetEndpoint>(std::move(listener), randomU64());
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
    return std::make_shared<EthernetConnection>(std::move(context), local, remote, std::move(out), localData.listener(),
                                                remoteData.nonce(), deadline);
  }
};

}  // namespace

const TransportFactory& ethernetTransportFactory() {
  static const EthernetFactory factory;
  return factory;
}

}  // namespace mscclpp
