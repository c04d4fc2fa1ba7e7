// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_CONNECTION_HPP_
#define MSCCLPP_TRANSPORT_CONNECTION_HPP_

#include <atomic>
#include <exception>
#include <memory>
#include <mscclpp/core.hpp>
#include <mutex>

namespace mscclpp {

/// The part of every connection that is the same for all transports: argument checks, and errors
/// latched by a transport's own threads that are rethrown at the next call a user makes on the
/// connection. A transport implements the hooks named *FromUser (run on the calling thread, after the
/// checks here) and may call latchError() from any of its threads.
class BaseConnection {
 public:
  BaseConnection(std::shared_ptr<Context> context, const Endpoint& localEndpoint, const Endpoint& remoteEndpoint);
  virtual ~BaseConnection() = default;
  BaseConnection(const BaseConnection&) = delete;
  BaseConnection& operator=(const BaseConnection&) = delete;

  void write(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src, uint64_t srcOffset,
             uint64_t size);
  void updateAndSync(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src, uint64_t newValue);
  void flush(int64_t timeoutUsec);

  Transport transport() const { return localConfig_.transport; }
  Transport remoteTransport() const { return remoteConfig_.transport; }
  std::shared_ptr<Context> context() const { return context_; }
  const Device& localDevice() const { return localConfig_.device; }
  int maxWriteQueueSize() const { return maxWriteQueueSize_; }
  /// "ETH to <peer>": for error messages.
  virtual std::string describe() const;

  /// Whether a transport thread latched an error (the connection is dead); cheap, for waiters that
  /// poll it (Host2HostSemaphore::wait).
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// Rethrows the latched error, if any.
  void throwIfLatched() const;

 protected:
  virtual void writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src,
                             uint64_t srcOffset, uint64_t size) = 0;
  virtual void updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                                     uint64_t newValue) = 0;
  virtual void flushFromUser(int64_t timeoutUsec) = 0;

  /// Records the first error seen by a transport thread; later calls rethrow it.
  void latchError(std::exception_ptr error);

  std::shared_ptr<Context> context_;
  // Copies of the endpoints: the local one keeps transport resources (a listener, a QP) alive.
  Endpoint localEndpoint_;
  Endpoint remoteEndpoint_;
  EndpointConfig localConfig_;
  EndpointConfig remoteConfig_;
  int maxWriteQueueSize_;

 private:
  mutable std::mutex errorMutex_;
  std::exception_ptr latchedError_;
  std::atomic<bool> failed_{false};
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_CONNECTION_HPP_
