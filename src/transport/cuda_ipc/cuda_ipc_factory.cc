// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/cuda_ipc/cuda_ipc_factory.hpp"

#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "transport/context_impl.hpp"
#include "transport/cuda_ipc/cuda_ipc_connection.hpp"
#include "transport/cuda_ipc/cuda_ipc_memory.hpp"

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

  std::unique_ptr<TransportContextState> createContextState(Context&, Transport) const override {
    return std::make_unique<CudaIpcContextState>();
  }

  std::shared_ptr<TransportMemory> registerMemory(Context& context, Transport,
                                                  const RegisteredMemoryAccess::Impl& memory) const override {
    MSCCLPP_CHECK_USAGE(memory.deviceId >= 0, "registerMemory: ", memory.originalDataPtr,
                        " is not GPU memory, so it cannot be registered for CudaIpc");
    // Nothing to export for an empty range; peers reach it (and never dereference it) through the pointer.
    if (memory.size == 0) return nullptr;
    return std::make_shared<CudaIpcMemory>(
        GpuIpcExport::create(memory.originalDataPtr, memory.size),
        MemoryAccounting::Charge(ContextAccess::impl(context).accounting, &MemoryAccounting::exportedHandles, 1));
  }

  std::shared_ptr<TransportMemory> readMemory(ByteReader& reader, Transport,
                                              const RegisteredMemoryAccess::Impl& memory) const override {
    GpuIpcMemHandle handle = readGpuIpcMemHandle(reader);
    if (handle.hostHash != memory.hostHash || handle.processHash != memory.pidHash) {
      reader.fail("the CudaIpc handle names another process than the memory");
    }
    if (memory.size > handle.baseSize - handle.offsetFromBase) {
      reader.fail(concat(memory.size, " bytes at offset ", handle.offsetFromBase,
                         " do not fit the CudaIpc handle's allocation of ", handle.baseSize, " bytes"));
    }
    return std::make_shared<CudaIpcMemory>(handle);
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
