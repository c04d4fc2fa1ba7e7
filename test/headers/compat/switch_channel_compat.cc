// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/switch_channel.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::SwitchChannel::DeviceHandle, mscclpp::SwitchChannelDeviceHandle>);
static_assert(!std::is_default_constructible_v<mscclpp::NvlsConnection>);
static_assert(std::is_same_v<decltype(&mscclpp::connectNvlsCollective),
                             std::shared_ptr<mscclpp::NvlsConnection> (*)(std::shared_ptr<mscclpp::Communicator>,
                                                                          std::vector<int>, size_t)>);

size_t useSwitchChannel(std::shared_ptr<mscclpp::Communicator> comm) {
  std::shared_ptr<mscclpp::NvlsConnection> nvls = mscclpp::connectNvlsCollective(comm, {0, 1}, 1 << 20);
  mscclpp::NvlsConnection created(1 << 20, 2);
  mscclpp::NvlsConnection imported(created.serialize());
  imported.addDevice();
  imported.addDevice(0);
  mscclpp::GpuBuffer<char> buffer(1 << 20);
  mscclpp::SwitchChannel channel =
      nvls->bindAllocatedMemory(reinterpret_cast<CUdeviceptr>(buffer.data()), buffer.bytes());
  mscclpp::SwitchChannel plain(buffer.data(), nullptr, buffer.bytes());
  mscclpp::SwitchChannelDeviceHandle handle = plain.deviceHandle();
  return handle.bufferSize + nvls->getMultiCastMinGranularity() + reinterpret_cast<size_t>(channel.getDevicePtr());
}

}  // namespace compat
