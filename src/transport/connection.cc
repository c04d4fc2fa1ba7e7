// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/connection.hpp"

#include "common/checks.hpp"
#include "memory/registered_memory.hpp"
#include "transport/endpoint_impl.hpp"

namespace mscclpp {

BaseConnection::BaseConnection(std::shared_ptr<Context> context, const Endpoint& localEndpoint,
                               const Endpoint& remoteEndpoint)
    : context_(std::move(context)),
      localEndpoint_(localEndpoint),
      remoteEndpoint_(remoteEndpoint),
      localConfig_(localEndpoint.config()),
      remoteConfig_(remoteEndpoint.config()),
      maxWriteQueueSize_(localEndpoint.maxWriteQueueSize()) {}

std::string BaseConnection::describe() const {
  return concat(transport(), " connection to ", remoteTransport(), " endpoint of process ", std::hex,
                remoteEndpoint_.pidHash());
}

void BaseConnection::write(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src,
                           uint64_t srcOffset, uint64_t size) {
  throwIfLatched();
  checkRange(dst, dstOffset, size, "Connection::write destination");
  checkRange(src, srcOffset, size, "Connection::write source");
  MSCCLPP_CHECK_USAGE(dst.transports().has(remoteTransport()),
                      "Connection::write: the destination is not registered "
                      "for ",
                      remoteTransport(), " (it has ", dst.transports().count(), " other transport(s))");
  MSCCLPP_CHECK_USAGE(src.transports().has(transport()), "Connection::write: the source is not registered for ",
                      transport());
  MSCCLPP_CHECK_USAGE(RegisteredMemoryAccess::impl(src)->isLocalProcess(),
                      "Connection::write: the source must be memory of this process");
  if (size == 0) return;
  writeFromUser(dst, dstOffset, src, srcOffset, size);
}

void BaseConnection::updateAndSync(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src, uint64_t newValue) {
  throwIfLatched();
  checkRange(dst, dstOffset, sizeof(uint64_t), "Connection::updateAndSync destination");
  MSCCLPP_CHECK_USAGE(dst.transports().has(remoteTransport()),
                      "Connection::updateAndSync: the destination is not "
                      "registered for ",
                      remoteTransport());
  MSCCLPP_CHECK_USAGE(src != nullptr, "Connection::updateAndSync: null source");
  MSCCLPP_CHECK_USAGE(dstOffset % sizeof(uint64_t) == 0, "Connection::updateAndSync: offset ", dstOffset,
                      " is not 8-byte aligned");
  updateAndSyncFromUser(dst, dstOffset, src, newValue);
}

void BaseConnection::flush(int64_t timeoutUsec) {
  throwIfLatched();
  flushFromUser(timeoutUsec);
  throwIfLatched();
}

void BaseConnection::latchError(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(errorMutex_);
  if (!latchedError_) latchedError_ = error;
  failed_.store(true, std::memory_order_release);
}

void BaseConnection::throwIfLatched() const {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(errorMutex_);
    error = latchedError_;
  }
  if (error) std::rethrow_exception(error);
}

// The public value type forwards to the shared implementation.

Connection::Connection(std::shared_ptr<BaseConnection> impl) : impl_(std::move(impl)) {}

namespace {
BaseConnection& checked(const std::shared_ptr<BaseConnection>& impl) {
  if (!impl) MSCCLPP_THROW(InvalidUsage, "empty Connection (default-constructed)");
  return *impl;
}
}  // namespace

void Connection::write(RegisteredMemory dst, uint64_t dstOffset, RegisteredMemory src, uint64_t srcOffset,
                       uint64_t size) {
  checked(impl_).write(dst, dstOffset, src, srcOffset, size);
}

void Connection::updateAndSync(RegisteredMemory dst, uint64_t dstOffset, uint64_t* src, uint64_t newValue) {
  checked(impl_).updateAndSync(dst, dstOffset, src, newValue);
}

void Connection::flush(int64_t timeoutUsec) { checked(impl_).flush(timeoutUsec); }
Transport Connection::transport() const { return checked(impl_).transport(); }
Transport Connection::remoteTransport() const { return checked(impl_).remoteTransport(); }
std::shared_ptr<Context> Connection::context() const { return checked(impl_).context(); }
const Device& Connection::localDevice() const { return checked(impl_).localDevice(); }
int Connection::getMaxWriteQueueSize() const { return checked(impl_).maxWriteQueueSize(); }

}  // namespace mscclpp
