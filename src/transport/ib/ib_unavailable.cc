// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The IB transport of a build without MSCCLPP_USE_IB: discovery finds nothing and every hook says why.
#if !defined(MSCCLPP_USE_IB)

#include "common/checks.hpp"
#include "transport/ib/ib_factory.hpp"

namespace mscclpp {
namespace {

[[noreturn]] void unavailable(Transport transport) {
  MSCCLPP_THROW(InvalidUsage, "transport ", transport, " is not available in this build (MSCCLPP_USE_IB=OFF)");
}

class IbUnavailableFactory : public TransportFactory {
 public:
  std::shared_ptr<TransportMemory> registerMemory(Context&, Transport transport,
                                                  const RegisteredMemoryAccess::Impl&) const override {
    unavailable(transport);
  }
  std::shared_ptr<TransportEndpoint> createEndpoint(Context&, const EndpointConfig& config) const override {
    unavailable(config.transport);
  }
  std::shared_ptr<TransportEndpoint> readEndpoint(ByteReader&, const EndpointConfig& config) const override {
    unavailable(config.transport);
  }
  std::shared_ptr<BaseConnection> connect(std::shared_ptr<Context>, const Endpoint& local,
                                          const Endpoint&) const override {
    unavailable(local.transport());
  }
};

}  // namespace

const TransportFactory& ibTransportFactory() {
  static const IbUnavailableFactory factory;
  return factory;
}

// No devices; a lookup throws rather than answer with "" or Transport::Unknown, which callers would
// carry on with.
int getIBDeviceCount() { return 0; }

std::string getIBDeviceName(Transport ibTransport) {
  MSCCLPP_THROW(InvalidUsage, "getIBDeviceName(", ibTransport, "): IB is not available in this build");
}

Transport getIBTransportByDeviceName(const std::string& ibDeviceName) {
  MSCCLPP_THROW(InvalidUsage, "getIBTransportByDeviceName(\"", ibDeviceName, "\"): IB is not available in this build");
}

}  // namespace mscclpp

#endif  // !defined(MSCCLPP_USE_IB)
