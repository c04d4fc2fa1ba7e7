// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/port_channel.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::PortChannel::DeviceHandle, mscclpp::PortChannelDeviceHandle>);
static_assert(std::is_same_v<mscclpp::BasePortChannel::DeviceHandle, mscclpp::BasePortChannelDeviceHandle>);
static_assert(std::is_base_of_v<mscclpp::BaseProxyService, mscclpp::ProxyService>);
static_assert(std::is_abstract_v<mscclpp::BaseProxyService>);

}  // namespace compat
namespace mscclpp {
struct PortChannel;
struct BasePortChannel;
}  // namespace mscclpp
namespace compat {

struct UserPortChannel : mscclpp::BasePortChannel {};

void useProxyService(mscclpp::Communicator& comm, const mscclpp::Connection& conn, const mscclpp::Semaphore& sem,
                     mscclpp::RegisteredMemory memory) {
  mscclpp::ProxyService service;
  mscclpp::ProxyService sized(256);
  mscclpp::SemaphoreId built = service.buildAndAddSemaphore(comm, conn);
  mscclpp::SemaphoreId added = service.addSemaphore(sem);
  mscclpp::SemaphoreId shared = service.addSemaphore(std::make_shared<mscclpp::Host2DeviceSemaphore>(sem));
  mscclpp::MemoryId dst = service.addMemory(memory);
  mscclpp::MemoryId next = service.nextMemoryId();
  mscclpp::MemoryId nextFew = service.nextMemoryId(3);
  std::shared_ptr<mscclpp::Host2DeviceSemaphore> semaphore = service.semaphore(built);
  mscclpp::BasePortChannel base = service.basePortChannel(added);
  mscclpp::PortChannel channel = service.portChannel(shared, dst, next + nextFew);
  mscclpp::BasePortChannel direct(built, semaphore, nullptr);
  mscclpp::PortChannel directChannel(built, sem, nullptr, dst, dst);
  mscclpp::PortChannelDeviceHandle handle = channel.deviceHandle();
  (void)base.deviceHandle();
  (void)direct.deviceHandle();
  (void)directChannel.deviceHandle();
  (void)handle;
  mscclpp::BaseProxyService& asBase = service;
  asBase.startProxy();
  asBase.stopProxy();
  sized.startProxy(true);
  sized.stopProxy();
}

}  // namespace compat
