// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/cuda_ipc/cuda_ipc_factory.hpp"

#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "transport/cuda_ipc/cuda_ipc_connection.hpp"

namespace mscclpp {
namespace {

/// A CudaIpc endpoint needs nothing beyond the common fields (device, host, process).
class CudaIpcEndpoint : public TransportEndpoint {
 public:
  void serialize(ByteWriter&) const override {}
};

class CudaIpcFactory : public TransportFactory {
 public:
  std::shared_ptr<TransportEndpoint> createEndpoint(Context&, const EndpointConfig& config) const override {
    MSCCLPP_CHECK_USAGE(config.device.type == DeviceType::GPU, "CudaIpc endpoints live on a GPU, not ",
                        config.device.type);
    return std::make_shared<CudaIpcEndpoint>();
  }

  std::shared_ptr<TransportEndpoint> readEndpoint(ByteReader&, const EndpointConfig& config) const override {
    return std::make_shared<CudaIpcEndpoint>();
  }

  std::shared_ptr<BaseConnection> connect(std::shared_ptr<Context> context, const Endpoint& local,
                                          const Endpoint& remote) const override {
    MSCCLPP_CHECK_USAGE(remote.device().type == DeviceType::GPU, "CudaIpc connect: the remote endpoint is on ",
                        remote.device().type, ", not a GPU");
    MSCCLPP_CHECK_USAGE(remote.hostHash() == getHostHash(),
                        "CudaIpc connect: the remote endpoint is on another host; use IB or Ethernet there");
    const int localDevice = local.device().id, remoteDevice = remote.device().id;
    if (remote.pidHash() == getPidHash() && localDevice != remoteDevice) {
      // The same process reaches another GPU's memory through peer access.
      CudaDeviceGuard guard(localDevice);
      cudaError_t err = cudaDeviceEnablePeerAccess(remoteDevice, 0);
      if (err == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else {
        MSCCLPP_CUDATHROW(err);
      }
    }
    return std::make_shared<CudaIpcConnection>(std::move(context), local, remote);
  }
};

}  // namespace

const TransportFactory& cudaIpcTransportFactory() {
  static const CudaIpcFactory factory;
  return factory;
}

}  // namespace mscclpp
