// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_PORT_CHANNEL_HPP_
#define MSCCLPP_PORT_CHANNEL_HPP_

#include <memory>

#include "core.hpp"
#include "port_channel_device.hpp"
#include "proxy.hpp"
#include "semaphore.hpp"

namespace mscclpp {

/// Something that runs a proxy thread.
class BaseProxyService {
 public:
  BaseProxyService() = default;
  virtual ~BaseProxyService() = default;
  virtual void startProxy(bool blocking = false) = 0;
  virtual void stopProxy() = 0;
};

struct BasePortChannel;
struct PortChannel;

/// A proxy thread that turns GPU requests into transfers over connections: a kernel pushes put,
/// signal and flush requests naming memories and semaphores by id; the proxy performs them with
/// Connection::write, Host2DeviceSemaphore::signal and Connection::flush, in order.
/// Semaphores and memories may be added before or after startProxy(), from any thread. Ids are
/// dense, in order of addition; there can be at most 1024 semaphores and 512 memories (the widths of
/// the request's fields). A request that fails does not stop the proxy: the first such error is
/// kept and rethrown by the next call on the ProxyService (stopProxy included), which clears it.
class ProxyService : public BaseProxyService {
 public:
  ProxyService(int fifoSize = DEFAULT_FIFO_SIZE);
  ~ProxyService() override;

  /// Builds a Host2DeviceSemaphore with the peer of `connection` (which calls it too) and adds it.
  SemaphoreId buildAndAddSemaphore(Communicator& communicator, const Connection& connection);
  SemaphoreId addSemaphore(const Semaphore& semaphore);
  SemaphoreId addSemaphore(std::shared_ptr<Host2DeviceSemaphore> semaphore);
  MemoryId addMemory(RegisteredMemory memory);

  /// The id the next `count` memories will get; Error(InvalidUsage) if count is 0.
  MemoryId nextMemoryId(uint32_t count = 1) const;

  std::shared_ptr<Host2DeviceSemaphore> semaphore(SemaphoreId id) const;
  BasePortChannel basePortChannel(SemaphoreId id);
  PortChannel portChannel(SemaphoreId id, MemoryId dst, MemoryId src);

  void startProxy(bool blocking = false) override;
  /// Stops the thread; rethrows the error a request raised (e.g. a failed write) if no call has yet.
  void stopProxy() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> pimpl_;
};

/// A channel whose device handle pushes requests to a ProxyService; memories are named per request.
struct BasePortChannel {
 public:
  using DeviceHandle = BasePortChannelDeviceHandle;

  BasePortChannel() = default;
  BasePortChannel(SemaphoreId semaphoreId, std::shared_ptr<Host2DeviceSemaphore> semaphore,
                  std::shared_ptr<Proxy> proxy);
  BasePortChannel(SemaphoreId semaphoreId, const Semaphore& semaphore, std::shared_ptr<Proxy> proxy);
  BasePortChannel(const BasePortChannel& other) = default;
  BasePortChannel& operator=(BasePortChannel& other);

  DeviceHandle deviceHandle() const;

 protected:
  SemaphoreId semaphoreId_ = 0;
  std::shared_ptr<Host2DeviceSemaphore> semaphore_;
  std::shared_ptr<Proxy> proxy_;
};

/// A BasePortChannel bound to one destination and one source memory.
struct PortChannel : public BasePortChannel {
 public:
  using DeviceHandle = PortChannelDeviceHandle;

  PortChannel() = default;
  PortChannel(SemaphoreId semaphoreId, std::shared_ptr<Host2DeviceSemaphore> semaphore, std::shared_ptr<Proxy> proxy,
              MemoryId dst, MemoryId src);
  PortChannel(SemaphoreId semaphoreId, const Semaphore& semaphore, std::shared_ptr<Proxy> proxy, MemoryId dst,
              MemoryId src);
  PortChannel(const PortChannel& other) = default;
  PortChannel& operator=(PortChannel& other);

  DeviceHandle deviceHandle() const;

 private:
  MemoryId dst_ = 0;
  MemoryId src_ = 0;
};

using BaseProxyChannel [[deprecated("Use BasePortChannel instead.")]] = BasePortChannel;
using ProxyChannel [[deprecated("Use PortChannel instead.")]] = PortChannel;

}  // namespace mscclpp

#endif  // MSCCLPP_PORT_CHANNEL_HPP_
