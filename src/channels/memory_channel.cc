// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/memory_channel.hpp>

#include "common/checks.hpp"

namespace mscclpp {

BaseMemoryChannel::BaseMemoryChannel(std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore)
    : semaphore_(std::move(semaphore)) {
  MSCCLPP_CHECK_USAGE(semaphore_, "BaseMemoryChannel: null semaphore");
}

BaseMemoryChannel::BaseMemoryChannel(const Semaphore& semaphore)
    : BaseMemoryChannel(std::make_shared<MemoryDevice2DeviceSemaphore>(semaphore)) {}

BaseMemoryChannel& BaseMemoryChannel::operator=(BaseMemoryChannel& other) {
  semaphore_ = other.semaphore_;
  return *this;
}

BaseMemoryChannel::DeviceHandle BaseMemoryChannel::deviceHandle() const {
  MSCCLPP_CHECK_USAGE(semaphore_, "BaseMemoryChannel::deviceHandle: empty channel");
  return DeviceHandle(semaphore_->deviceHandle());
}

namespace {
void checkChannelMemories(const RegisteredMemory& dst, const RegisteredMemory& src) {
  MSCCLPP_CHECK_USAGE(dst.transports().has(Transport::CudaIpc),
                      "MemoryChannel: the destination must be registered for CudaIpc");
  MSCCLPP_CHECK_USAGE(dst.data() != nullptr, "MemoryChannel: the destination is not mapped in this process");
}
}  // namespace

MemoryChannel::MemoryChannel(std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore, RegisteredMemory dst,
                             RegisteredMemory src, void* packetBuffer)
    : BaseMemoryChannel(std::move(semaphore)), dst_(dst), src_(src), packetBuffer_(packetBuffer) {
  checkChannelMemories(dst_, src_);
}

MemoryChannel::MemoryChannel(const Semaphore& semaphore, RegisteredMemory dst, RegisteredMemory src, void* packetBuffer)
    : BaseMemoryChannel(semaphore), dst_(dst), src_(src), packetBuffer_(packetBuffer) {
  checkChannelMemories(dst_, src_);
}

MemoryChannel& MemoryChannel::operator=(MemoryChannel& other) {
  BaseMemoryChannel::operator=(other);
  dst_ = other.dst_;
  src_ = other.src_;
  packetBuffer_ = other.packetBuffer_;
  return *this;
}

MemoryChannel::DeviceHandle MemoryChannel::deviceHandle() const {
  MSCCLPP_CHECK_USAGE(semaphore_, "MemoryChannel::deviceHandle: empty channel");
  return DeviceHandle(semaphore_->deviceHandle(), dst_.data(), src_.data(), packetBuffer_);
}

}  // namespace mscclpp
