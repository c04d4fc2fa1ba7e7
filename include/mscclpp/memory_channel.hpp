// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_CHANNEL_HPP_
#define MSCCLPP_MEMORY_CHANNEL_HPP_

#include <memory>
#include <type_traits>

#include "core.hpp"
#include "memory_channel_device.hpp"
#include "semaphore.hpp"

namespace mscclpp {

/// A channel for signaling between two GPUs through mapped memory, with no proxy.
struct BaseMemoryChannel {
 public:
  using DeviceHandle = BaseMemoryChannelDeviceHandle;

  BaseMemoryChannel() = default;
  BaseMemoryChannel(std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore);
  BaseMemoryChannel(const Semaphore& semaphore);
  BaseMemoryChannel(const BaseMemoryChannel& other) = default;
  BaseMemoryChannel& operator=(BaseMemoryChannel& other);

  DeviceHandle deviceHandle() const;

 protected:
  std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore_;
};

/// A channel through which GPU threads read and write the peer's memory directly (put/get/packets).
/// `dst` is the peer's memory and must be mapped here (registered for CudaIpc); `src` is local memory;
/// `packetBuffer` is local memory the peer's putPackets write into (optional).
struct MemoryChannel : public BaseMemoryChannel {
 public:
  using DeviceHandle = MemoryChannelDeviceHandle;

  MemoryChannel() = default;
  MemoryChannel(std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore, RegisteredMemory dst, RegisteredMemory src,
                void* packetBuffer = nullptr);
  MemoryChannel(const Semaphore& semaphore, RegisteredMemory dst, RegisteredMemory src, void* packetBuffer = nullptr);
  MemoryChannel(const MemoryChannel& other) = default;
  MemoryChannel& operator=(MemoryChannel& other);

  DeviceHandle deviceHandle() const;

 private:
  RegisteredMemory dst_;
  RegisteredMemory src_;
  void* packetBuffer_ = nullptr;
};

using SmChannel [[deprecated("Use MemoryChannel instead.")]] = MemoryChannel;

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_CHANNEL_HPP_
