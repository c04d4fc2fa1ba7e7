// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/port_channel.hpp>

#include "common/checks.hpp"

namespace mscclpp {

BasePortChannel::BasePortChannel(SemaphoreId semaphoreId, std::shared_ptr<Host2DeviceSemaphore> semaphore,
                                 std::shared_ptr<Proxy> proxy)
    : semaphoreId_(semaphoreId), semaphore_(std::move(semaphore)), proxy_(std::move(proxy)) {
  MSCCLPP_CHECK_USAGE(semaphore_ && proxy_, "BasePortChannel: null semaphore or proxy");
}

BasePortChannel::BasePortChannel(SemaphoreId semaphoreId, const Semaphore& semaphore, std::shared_ptr<Proxy> proxy)
    : BasePortChannel(semaphoreId, std::make_shared<Host2DeviceSemaphore>(semaphore), std::move(proxy)) {}

BasePortChannel& BasePortChannel::operator=(BasePortChannel& other) {
  semaphoreId_ = other.semaphoreId_;
  semaphore_ = other.semaphore_;
  proxy_ = other.proxy_;
  return *this;
}

BasePortChannel::DeviceHandle BasePortChannel::deviceHandle() const {
  MSCCLPP_CHECK_USAGE(semaphore_ && proxy_, "BasePortChannel::deviceHandle: empty channel");
  return DeviceHandle(semaphoreId_, semaphore_->deviceHandle(), proxy_->fifo()->deviceHandle());
}

PortChannel::PortChannel(SemaphoreId semaphoreId, std::shared_ptr<Host2DeviceSemaphore> semaphore,
                         std::shared_ptr<Proxy> proxy, MemoryId dst, MemoryId src)
    : BasePortChannel(semaphoreId, std::move(semaphore), std::move(proxy)), dst_(dst), src_(src) {}

PortChannel::PortChannel(SemaphoreId semaphoreId, const Semaphore& semaphore, std::shared_ptr<Proxy> proxy,
                         MemoryId dst, MemoryId src)
    : BasePortChannel(semaphoreId, semaphore, std::move(proxy)), dst_(dst), src_(src) {}

PortChannel& PortChannel::operator=(PortChannel& other) {
  BasePortChannel::operator=(other);
  dst_ = other.dst_;
  src_ = other.src_;
  return *this;
}

PortChannel::DeviceHandle PortChannel::deviceHandle() const {
  return DeviceHandle(semaphoreId_, semaphore_->deviceHandle(), proxy_->fifo()->deviceHandle(), dst_, src_);
}

}  // namespace mscclpp
