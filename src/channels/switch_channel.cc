// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Every NvlsConnection operation would create, import or use a multicast object, so each goes through
// the NVLS gate (src/gpu/nvls_gate.hpp), which refuses in this build.

#include <mscclpp/switch_channel.hpp>

#include "gpu/nvls_gate.hpp"

namespace mscclpp {

SwitchChannel::DeviceHandle SwitchChannel::deviceHandle() const {
  DeviceHandle handle;
  handle.devicePtr = devicePtr_;
  handle.mcPtr = mcPtr_.get();
  handle.bufferSize = bufferSize_;
  return handle;
}

void* SwitchChannel::getDevicePtr() { return devicePtr_; }

NvlsConnection::NvlsConnection(size_t, int) { refuseNvls("NvlsConnection: creating a multicast object"); }

NvlsConnection::NvlsConnection(const std::vector<char>&) { refuseNvls("NvlsConnection: importing a multicast object"); }

std::vector<char> NvlsConnection::serialize() { refuseNvls("NvlsConnection::serialize"); }

void NvlsConnection::addDevice() { refuseNvls("NvlsConnection::addDevice"); }

void NvlsConnection::addDevice(int) { refuseNvls("NvlsConnection::addDevice"); }

SwitchChannel NvlsConnection::bindAllocatedMemory(CUdeviceptr, size_t) {
  refuseNvls("NvlsConnection::bindAllocatedMemory");
}

size_t NvlsConnection::getMultiCastMinGranularity() { refuseNvls("NvlsConnection::getMultiCastMinGranularity"); }

std::shared_ptr<NvlsConnection> connectNvlsCollective(std::shared_ptr<Communicator>, std::vector<int>, size_t) {
  refuseNvls("connectNvlsCollective");
}

}  // namespace mscclpp
