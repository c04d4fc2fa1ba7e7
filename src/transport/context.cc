// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/env.hpp>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "memory/registered_memory.hpp"
#include "transport/connection.hpp"
#include "transport/context_impl.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

TransportContextState& Context::Impl::transportStateBase(Context& context, Transport transport) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = transportStates.find(transport);
    if (it != transportStates.end()) return *it->second;
  }
  // Made outside the lock: a factory may take time (open a device) or ask the Context for other things.
  auto state = transportFactory(transport).createContextState(context, transport);
  MSCCLPP_ASSERT(state != nullptr, "transport ", transport, " keeps no per-Context state");
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = transportStates.emplace(transport, std::move(state));
  return *it->second;  // another thread may have won the race; its state is the one kept
}

std::shared_ptr<uint64_t> Context::Impl::deviceToken(int deviceId, TokenPlacement placement) {
  std::shared_ptr<TokenPool> pool;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = tokenPools[deviceId];
    if (!slot) slot = TokenPool::create(deviceId);
    pool = slot;
  }
  return pool->getToken(placement);
}

Context::Context() : pimpl_(std::make_unique<Impl>()) {}

Context::~Context() = default;

RegisteredMemory Context::registerMemory(void* ptr, size_t size, TransportFlags transports) {
  MSCCLPP_CHECK_USAGE(ptr != nullptr || size == 0, "registerMemory: null pointer with size ", size);
  MSCCLPP_CHECK_USAGE(!transports.has(Transport::Unknown), "registerMemory: Transport::Unknown is not a transport");
  auto impl = std::make_shared<RegisteredMemoryAccess::Impl>();
  impl->data = ptr;
  impl->originalDataPtr = ptr;
  impl->size = size;
  impl->hostHash = getHostHash();
  impl->pidHash = getPidHash();
  impl->transports = transports;
  impl->deviceId = detail::gpuIdFromAddress(ptr);
  for (size_t t = 0; t < detail::TransportFlagsSize; ++t) {
    Transport transport = static_cast<Transport>(t);
    if (!transports.has(transport)) continue;
    // Throws for a transport this build lacks, or one that cannot reach this memory.
    auto entry = transportFactory(transport).registerMemory(*this, transport, *impl);
    if (entry) impl->transportMemories.push_back(std::move(entry));
  }
  impl->registration = LocalMemoryRegistry::instance().add(ptr, size, impl->deviceId, transports);
  return RegisteredMemoryAccess::make(std::move(impl));
}

Endpoint Context::createEndpoint(EndpointConfig config) {
  MSCCLPP_CHECK_USAGE(config.transport != Transport::Unknown && config.transport != Transport::NumTransports,
                      "createEndpoint: ", config.transport, " is not a transport");
  if (config.device.type == DeviceType::GPU && config.device.id < 0) {
    MSCCLPP_CUDATHROW(cudaGetDevice(&config.device.id));
  }
  auto impl = std::make_shared<EndpointAccess::Impl>();
  impl->hostHash = getHostHash();
  impl->pidHash = getPidHash();
  impl->context = weak_from_this();
  impl->transportData = transportFactory(config.transport).createEndpoint(*this, config);
  impl->config = config;
  return EndpointAccess::make(std::move(impl));
}

Connection Context::connect(const Endpoint& localEndpoint, const Endpoint& remoteEndpoint) {
  const auto& local = EndpointAccess::impl(localEndpoint);
  const auto& remote = EndpointAccess::impl(remoteEndpoint);
  MSCCLPP_CHECK_USAGE(local && remote, "connect: empty Endpoint");
  MSCCLPP_CHECK_USAGE(local->context.lock().get() == this,
                      "connect: the local endpoint was not created by this Context");
  MSCCLPP_CHECK_USAGE(local->config.device.type != DeviceType::GPU || local->config.device.id >= 0,
                      "connect: local GPU endpoint has no device id");
  MSCCLPP_CHECK_USAGE(remote->config.device.type != DeviceType::GPU || remote->config.device.id >= 0,
                      "connect: remote GPU endpoint has no device id");
  const TransportFactory& factory = transportFactory(local->config.transport);
  MSCCLPP_CHECK_USAGE(factory.compatible(local->config.transport, remote->config.transport), "connect: local ",
                      local->config.transport, " endpoint cannot connect to a remote ", remote->config.transport,
                      " endpoint");
  return ConnectionAccess::make(factory.connect(shared_from_this(), localEndpoint, remoteEndpoint));
}

ContextMemoryUsage Context::memoryUsage() const {
  ContextMemoryUsage usage;
  usage.deviceBytes = pimpl_->accounting->deviceBytes.load();
  usage.hostPinnedBytes = pimpl_->accounting->hostPinnedBytes.load();
  usage.exportedHandles = pimpl_->accounting->exportedHandles.load();
  std::lock_guard<std::mutex> lock(pimpl_->mutex);
  for (const auto& [deviceId, pool] : pimpl_->tokenPools) {
    TokenPoolStats stats = pool->stats();
    usage.deviceBytes += stats.deviceBytes;
    usage.tokenPoolChunks += stats.chunks;
    usage.tokenPoolCapacity += stats.capacity;
    usage.tokensInUse += stats.inUse;
  }
  return usage;
}

}  // namespace mscclpp
