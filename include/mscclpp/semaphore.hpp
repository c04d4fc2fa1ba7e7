// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_SEMAPHORE_HPP_
#define MSCCLPP_SEMAPHORE_HPP_

#include <memory>

#include "core.hpp"
#include "gpu_utils.hpp"
#include "semaphore_device.hpp"

namespace mscclpp {

/// A semaphore signaled and waited on by host threads: for connections whose local side is the CPU
/// (DeviceType::CPU endpoints; not CudaIpc). signal() from one thread at a time.
class Host2HostSemaphore {
 public:
  /// Throws Error(InvalidUsage) unless the connection's local device is the CPU and its transport is
  /// not CudaIpc.
  Host2HostSemaphore(const Semaphore& semaphore);
  /// Builds the semaphore with the peer the communicator made `connection` with (both sides call it).
  Host2HostSemaphore(Communicator& communicator, const Connection& connection);

  Connection& connection();

  /// Increments the peer's inbound token.
  void signal();

  /// True, consuming one signal, if a signal has arrived that no poll or wait consumed yet.
  bool poll();

  /// Waits for the next signal. The limit is a time: `maxSpinCount` x 0.5 us (the default is 5 s;
  /// negative: no limit), after which it throws Error(Timeout); a wait that timed out consumes
  /// nothing, so it can be retried. Throws Error(Aborted) soon after the connection fails (the peer
  /// died or closed it), with or without a limit.
  void wait(int64_t maxSpinCount = 10000000);

 private:
  Semaphore semaphore_;
  std::unique_ptr<uint64_t> expectedInboundToken_;
  std::unique_ptr<uint64_t> outboundToken_;
};

/// A semaphore the host (or the proxy) signals and a GPU waits on: the local side must be a GPU.
/// signal() from one thread at a time.
class Host2DeviceSemaphore {
 public:
  using DeviceHandle = Host2DeviceSemaphoreDeviceHandle;

  /// Throws Error(InvalidUsage) unless the connection's local device is a GPU.
  Host2DeviceSemaphore(const Semaphore& semaphore);
  Host2DeviceSemaphore(Communicator& communicator, const Connection& connection);

  Connection& connection();

  /// Increments the peer's inbound token through the connection.
  void signal();

  /// The handle a kernel waits on.
  DeviceHandle deviceHandle() const;

 private:
  Semaphore semaphore_;
  std::shared_ptr<uint64_t> expectedInboundToken_;  // device memory
  std::unique_ptr<uint64_t> outboundToken_;         // host memory
};

/// A semaphore between two GPUs that signal each other directly through mapped memory (no proxy):
/// the local side must be a GPU and the peer's token must be mapped here (a CudaIpc connection).
class MemoryDevice2DeviceSemaphore {
 public:
  using DeviceHandle = MemoryDevice2DeviceSemaphoreDeviceHandle;

  /// Throws Error(InvalidUsage) unless the local device is a GPU and the peer's token is mapped.
  MemoryDevice2DeviceSemaphore(const Semaphore& semaphore);
  MemoryDevice2DeviceSemaphore(Communicator& communicator, const Connection& connection);

  Connection& connection();
  DeviceHandle deviceHandle() const;

 private:
  Semaphore semaphore_;
  std::shared_ptr<uint64_t> expectedInboundToken_;  // device memory
  std::shared_ptr<uint64_t> outboundToken_;         // device memory
};

using SmDevice2DeviceSemaphore [[deprecated("Use MemoryDevice2DeviceSemaphore instead.")]] =
    MemoryDevice2DeviceSemaphore;

}  // namespace mscclpp

#endif  // MSCCLPP_SEMAPHORE_HPP_
