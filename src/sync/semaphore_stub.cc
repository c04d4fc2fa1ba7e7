// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/serialization.hpp"
#include "sync/semaphore_impl.hpp"
#include "transport/context_impl.hpp"

namespace mscclpp {
namespace {

// A serialized RegisteredMemory of a token is small; anything larger is not a stub.
constexpr size_t kMaxMemoryBytes = 64 << 10;

std::shared_ptr<uint64_t> allocateToken(Context& context, const Device& device) {
  if (device.type == DeviceType::GPU) return ContextAccess::impl(context).deviceToken(device.id);
  return std::make_shared<uint64_t>(0);
}

}  // namespace

SemaphoreStub::SemaphoreStub(std::shared_ptr<Impl> pimpl) : pimpl_(std::move(pimpl)) {}

SemaphoreStub::SemaphoreStub(const Connection& connection) : pimpl_(std::make_shared<Impl>()) {
  const auto& conn = ConnectionAccess::impl(connection);
  MSCCLPP_CHECK_USAGE(conn, "SemaphoreStub: empty Connection");
  pimpl_->connection = connection;
  pimpl_->device = connection.localDevice();
  MSCCLPP_CHECK_USAGE(pimpl_->device.type != DeviceType::GPU || pimpl_->device.id >= 0,
                      "SemaphoreStub: the connection's GPU has no device id");
  pimpl_->token = allocateToken(*connection.context(), pimpl_->device);
  pimpl_->memory = connection.context()->registerMemory(pimpl_->token.get(), sizeof(uint64_t), connection.transport());
}

const RegisteredMemory& SemaphoreStub::memory() const { return pimpl_->memory; }

std::vector<char> SemaphoreStub::serialize() const {
  ByteWriter writer;
  writer.putSizedBytes(pimpl_->memory.serialize()).put(pimpl_->device);
  return writer.take();
}

SemaphoreStub SemaphoreStub::deserialize(const std::vector<char>& data) {
  ByteReader reader(data, "SemaphoreStub");
  std::vector<char> memoryBytes = reader.getSizedBytes(kMaxMemoryBytes, "memory");
  Device device = reader.get<Device>("device");
  if (device.type < DeviceType::Unknown || device.type > DeviceType::GPU) {
    reader.fail(concat("device type ", static_cast<int>(device.type), " is invalid"));
  }
  if (device.id < -1) reader.fail(concat("device id ", device.id, " is invalid"));
  reader.expectEnd();
  auto impl = std::make_shared<Impl>();
  impl->memory = RegisteredMemory::deserialize(memoryBytes);
  MSCCLPP_CHECK_USAGE(impl->memory.size() == sizeof(uint64_t), "SemaphoreStub: the token is ", impl->memory.size(),
                      " bytes, not 8");
  impl->device = device;
  return SemaphoreStub(std::move(impl));
}

Semaphore::Semaphore(const SemaphoreStub& localStub, const SemaphoreStub& remoteStub)
    : pimpl_(std::make_shared<Impl>()) {
  const auto& local = SemaphoreStubAccess::impl(localStub);
  const auto& remote = SemaphoreStubAccess::impl(remoteStub);
  MSCCLPP_CHECK_USAGE(local && ConnectionAccess::impl(local->connection),
                      "Semaphore: the local stub must be one made by this process on a connection");
  pimpl_->connection = local->connection;
  pimpl_->localStub = local;
  pimpl_->localMemory = local->memory;
  // A stub handed over without serialization still describes memory for the peer's side; importing it
  // the same way a peer would gives one path for both cases.
  pimpl_->remoteMemory = ConnectionAccess::impl(remote->connection)
                             ? RegisteredMemory::deserialize(remote->memory.serialize())
                             : remote->memory;
}

Connection& Semaphore::connection() {
  MSCCLPP_CHECK_USAGE(pimpl_, "empty Semaphore (default-constructed)");
  return pimpl_->connection;
}

const RegisteredMemory& Semaphore::localMemory() const {
  MSCCLPP_CHECK_USAGE(pimpl_, "empty Semaphore (default-constructed)");
  return pimpl_->localMemory;
}

const RegisteredMemory& Semaphore::remoteMemory() const {
  MSCCLPP_CHECK_USAGE(pimpl_, "empty Semaphore (default-constructed)");
  return pimpl_->remoteMemory;
}

}  // namespace mscclpp
