// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Built with MSCCLPP_USE_IB only; ib_unavailable.cc stands in for it otherwise.
#if defined(MSCCLPP_USE_IB)

#include "transport/ib/ib_factory.hpp"

#include "common/checks.hpp"
#include "transport/context_impl.hpp"
#include "transport/ib/ib_connection.hpp"
#include "transport/ib/ib_objects.hpp"
#include "transport/ib/ibverbs.hpp"

namespace mscclpp {

std::shared_ptr<IbDevice> IbContextState::device() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!device_) {
    device_ = std::make_shared<IbDevice>(ibDeviceNameOf(transport_));
    LOG_INFO(CONN, transport_, " is IB device ", device_->name(), device_->hasAtomics() ? "" : " (no RDMA atomics)");
  }
  return device_;
}

namespace {

IbContextState& stateOf(Context& context, Transport transport) {
  return ContextAccess::impl(context).transportState<IbContextState>(context, transport);
}

class IbFactory : public TransportFactory {
 public:
  std::unique_ptr<TransportContextState> createContextState(Context&, Transport transport) const override {
    return std::make_unique<IbContextState>(transport);
  }

  std::shared_ptr<TransportMemory> registerMemory(Context& context, Transport transport,
                                                  const RegisteredMemoryAccess::Impl& memory) const override {
    // An empty range is never read or written; peers need no region for it.
    if (memory.size == 0) return nullptr;
    auto mr = std::make_unique<IbMr>(stateOf(context, transport).device(), memory.originalDataPtr, memory.size,
                                     memory.deviceId);
    return std::make_shared<IbMemory>(transport, std::move(mr));
  }

  std::shared_ptr<TransportMemory> readMemory(ByteReader& reader, Transport transport,
                                              const RegisteredMemoryAccess::Impl& memory) const override {
    const uint64_t addr = reader.get<uint64_t>("IB region address");
    const uint32_t rkey = reader.get<uint32_t>("IB region rkey");
    if (addr != reinterpret_cast<uint64_t>(memory.originalDataPtr)) {
      reader.fail(
          concat("the IB region's address 0x", std::hex, addr, " is not the memory's ", memory.originalDataPtr));
    }
    return std::make_shared<IbMemory>(transport, addr, rkey);
  }

  std::shared_ptr<TransportEndpoint> createEndpoint(Context& context, const EndpointConfig& config) const override {
    auto qp = std::make_shared<IbQp>(stateOf(context, config.transport).device(), config.ib);
    return std::make_shared<IbEndpoint>(std::move(qp));
  }

  std::shared_ptr<TransportEndpoint> readEndpoint(ByteReader& reader, const EndpointConfig&) const override {
    IbQpInfo info = reader.get<IbQpInfo>("IB queue pair");
    if (info.linkLayer != IBV_LINK_LAYER_INFINIBAND && info.linkLayer != IBV_LINK_LAYER_ETHERNET) {
      reader.fail(concat("IB link layer ", static_cast<int>(info.linkLayer), " is invalid"));
    }
    if (info.mtu < IBV_MTU_256 || info.mtu > IBV_MTU_4096) reader.fail(concat("IB MTU ", info.mtu, " is invalid"));
    return std::make_shared<IbEndpoint>(info);
  }

  bool compatible(Transport local, Transport remote) const override {
    return AllIBTransports.has(local) && AllIBTransports.has(remote);
  }

  std::shared_ptr<BaseConnection> connect(std::shared_ptr<Context> context, const Endpoint& local,
                                          const Endpoint& remote) const override {
    auto& localData = static_cast<const IbEndpoint&>(*EndpointAccess::impl(local)->transportData);
    auto& remoteData = static_cast<const IbEndpoint&>(*EndpointAccess::impl(remote)->transportData);
    MSCCLPP_CHECK_USAGE(localData.qp() != nullptr, "IB connect: the local endpoint is a remote one");
    MSCCLPP_CHECK_USAGE(!localData.qp()->connected(),
                        "IB connect: this endpoint is already connected; make one endpoint per connection");
    return std::make_shared<IbConnection>(std::move(context), local, remote, localData.qp(), remoteData.info());
  }
};

}  // namespace

const TransportFactory& ibTransportFactory() {
  static const IbFactory factory;
  return factory;
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_USE_IB)
