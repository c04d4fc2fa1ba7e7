// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/ethernet_connection.hpp"

#include <poll.h>

#include <climits>
#include <cstring>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/env.hpp>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/token_wait.hpp"
#include "memory/registered_memory.hpp"
#include "transport/context_impl.hpp"

namespace mscclpp {

namespace {

std::atomic<int64_t> stallLimitOverrideMs{INT64_MIN};

}  // namespace

std::chrono::milliseconds ethernetWriteStallLimit() {
  int64_t ms = stallLimitOverrideMs.load();
  if (ms != INT64_MIN) return std::chrono::milliseconds(ms);
  const int64_t sec = env()->ethernetWriteTimeoutSec;
  return sec < 0 ? std::chrono::milliseconds(-1) : std::chrono::milliseconds(sec * 1000);
}

void setEthernetWriteStallLimit(std::chrono::milliseconds limit) { stallLimitOverrideMs.store(limit.count()); }

char* StagingBuffer::get() {
  if (!buffer_) {
    buffer_ = detail::gpuCallocHostUnique<char>(bytes_, cudaHostAllocDefault);
    charge_ = MemoryAccounting::Charge(accounting_, &MemoryAccounting::hostPinnedBytes, bytes_);
  }
  return buffer_.get();
}

EthernetConnection::EthernetConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote,
                                       TcpSocket out, std::shared_ptr<EthernetListener> listener, uint64_t peerNonce,
                                       Deadline acceptDeadline)
    : BaseConnection(std::move(context), local, remote),
      peer_(toString(out.peer())),
      out_(std::move(out)),
      sendStaging_(kChunkBytes, ContextAccess::impl(*context_).accounting),
      recvStaging_(kChunkBytes, ContextAccess::impl(*context_).accounting),
      gpuDelivery_(recvStaging_),
      registry_(
          ContextAccess::impl(*context_).transportState<EthernetContextState>(*context_, Transport::Ethernet).registry),
      stallLimit_(ethernetWriteStallLimit()) {
  out_.setNoDelay();
  receiver_ = std::thread([this, listener = std::move(listener), peerNonce, acceptDeadline] {
    receiveLoopFromThread(listener, peerNonce, acceptDeadline);
  });
}

EthernetConnection::~EthernetConnection() {
  closing_ = true;
  // Shutting the sockets down wakes the receiver (a pending accept sees closing_); the peer then sees
  // the connection end.
  out_.shutdown();
  {
    std::lock_guard<std::mutex> lock(inMutex_);
    in_.shutdown();
  }
  if (receiver_.joinable()) receiver_.join();
}

std::string EthernetConnection::describe() const { return "Ethernet connection to " + peer_; }

void EthernetConnection::abortWrite(const std::string& why) noexcept {
  writeAborted_ = true;
  latchError(std::make_exception_ptr(Error(concat(describe(), ": ", why, "; connection closed"), ErrorCode::Aborted)));
  std::lock_guard<std::mutex> lock(inMutex_);
  in_.shutdown();
}

void EthernetConnection::sendOrLatch(const void* data, size_t size) {
  try {
    out_.sendAllMakingProgress(data, size, stallLimit_);
  } catch (const Error& e) {
    // Part of a message may have left: the stream is out of step for good, so the connection is done.
    std::exception_ptr error =
        e.getErrorCode() == ErrorCode::Timeout
            ? std::make_exception_ptr(
                  Error(concat("Connection::write: ", describe(), " took no data for ", stallLimit_.count(),
                               " ms (the peer stopped reading); connection closed"),
                        ErrorCode::Timeout))
            : std::current_exception();
    latchError(error);
    out_.shutdown();
    {
      std::lock_guard<std::mutex> lock(inMutex_);
      in_.shutdown();
    }
    throwIfLatched();
  }
}

void EthernetConnection::sendMessage(const EthernetMessage& message, const void* payload, int srcDeviceId) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  // A connection whose stream broke must not send the rest of a message into it.
  throwIfLatched();
  const char* from = static_cast<const char*>(payload);
  if (srcDeviceId < 0 && message.size <= kCoalesceBytes) {
    // Small messages from host memory leave in one system call: latency is per call, not per byte.
    smallMessage_.resize(sizeof(message) + message.size);
    std::memcpy(smallMessage_.data(), &message, sizeof(message));
    if (message.size > 0) std::memcpy(smallMessage_.data() + sizeof(message), from, message.size);
    sendOrLatch(smallMessage_.data(), smallMessage_.size());
    return;
  }
  sendOrLatch(&message, sizeof(message));
  for (uint64_t done = 0; done < message.size;) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, message.size - done));
    if (srcDeviceId >= 0) {
      // GPU source: stage through pinned memory (the socket cannot read device memory).
      CudaDeviceGuard guard(srcDeviceId);
      detail::gpuMemcpy(sendStaging_.get(), from + done, chunk, cudaMemcpyDeviceToHost);
      sendOrLatch(sendStaging_.get(), chunk);
    } else {
      sendOrLatch(from + done, chunk);
    }
    done += chunk;
  }
}

void EthernetConnection::writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src,
                                       uint64_t srcOffset, uint64_t size) {
  EthernetMessage message{EthernetMessage::Write, 0, reinterpret_cast<uint64_t>(dst.originalDataPtr()) + dstOffset,
                          size};
  const auto& srcImpl = RegisteredMemoryAccess::impl(src);
  sendMessage(message, static_cast<const char*>(src.originalDataPtr()) + srcOffset, srcImpl->deviceId);
}

void EthernetConnection::updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                                               uint64_t newValue) {
  *src = newValue;
  EthernetMessage message{EthernetMessage::Update, 0, reinterpret_cast<uint64_t>(dst.originalDataPtr()) + dstOffset,
                          sizeof(uint64_t)};
  sendMessage(message, &newValue, -1);
}

void EthernetConnection::flushFromUser(int64_t timeoutUsec) {
  std::lock_guard<std::mutex> flushLock(flushMutex_);
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(sendMutex_);
    seq = nextFlushSeq_++;
  }
  sendMessage(EthernetMessage{EthernetMessage::Flush, 0, seq, 0}, nullptr, -1);
  const Deadline deadline =
      timeoutUsec < 0 ? Deadline::never() : Deadline::after(std::chrono::milliseconds((timeoutUsec + 999) / 1000));
  // Acks arrive in order; an ack for a later flush also covers this one.
  while (ackedFlushSeq_ < seq) {
    uint64_t ack = 0;
    try {
      out_.recvAll(&ack, sizeof(ack), deadline);
    } catch (const Error& e) {
      if (e.getErrorCode() == ErrorCode::Timeout) {
        MSCCLPP_THROW(Timeout, "Connection::flush: ", describe(), " did not confirm within ", timeoutUsec, " us");
      }
      throw;
    }
    ackedFlushSeq_ = ack;
  }
}

void EthernetConnection::landGpuWritesFromThread() {
  gpuDelivery_.drain();
  gpuLeases_.clear();
}

void EthernetConnection::receiveIntoFromThread(const EthernetMessage& message) {
  const Deadline deadline = Deadline::never();
  // The lease keeps the memory registered until the last byte has landed: deregistration waits for
  // it (or fails this write), so nothing lands after the memory's last RegisteredMemory is gone.
  EthernetMemoryRegistry::Lease lease = registry_->acquire(message.addr, message.size, this);
  if (!lease) {
    MSCCLPP_THROW(InvalidUsage, describe(), ": the peer wrote ", message.size, " bytes to 0x", std::hex, message.addr,
                  ", which is not memory registered for Ethernet by this connection's Context; connection closed");
  }
  char* dst = reinterpret_cast<char*>(message.addr);
  if (lease.range().deviceId < 0) {
    if (message.type == EthernetMessage::Update) {
      uint64_t value = 0;
      in_.recvAll(&value, sizeof(value), deadline);
      // A host waiter that sees the token may read GPU memory written before it: land those first.
      landGpuWritesFromThread();
      // A host-side poller reads the token with an acquire load: store it whole. Sequentially
      // consistent, not just release: notifyTokenWritten() relies on it to see every sleeper.
      atomicStore(reinterpret_cast<uint64_t*>(dst), value, memoryOrderSeqCst);
      notifyTokenWritten(reinterpret_cast<uint64_t*>(dst));
      return;
    }
    in_.recvAll(dst, message.size, deadline);
    return;
  }
  if (message.type == EthernetMessage::Update) {
    uint64_t value = 0;
    in_.recvAll(&value, sizeof(value), deadline);
    gpuDelivery_.update(lease.range().deviceId, reinterpret_cast<uint64_t*>(dst), value);
  } else {
    try {
      gpuDelivery_.write(lease.range().deviceId, dst, message.size,
                         [&](char* buffer, size_t bytes) { in_.recvAll(buffer, bytes, deadline); });
    } catch (...) {
      // Copies of the pieces received so far may still run: the receiver finishes them, then lets go.
      gpuLeases_.push_back(std::move(lease));
      throw;
    }
  }
  // The copies may still be running: the lease ends when they are known to be done.
  gpuLeases_.push_back(std::move(lease));
}

void EthernetConnection::receiveLoopFromThread(std::shared_ptr<EthernetListener> listener, uint64_t peerNonce,
                                               Deadline acceptDeadline) {
  try {
    TcpSocket in = listener->acceptFrom(peerNonce, acceptDeadline, closing_);
    in.setNoDelay();
    {
      std::lock_guard<std::mutex> lock(inMutex_);
      if (closing_) return;
      in_ = std::move(in);
    }
    for (;;) {
      EthernetMessage message;
      // The leases of GPU writes end as soon as their copies are done, and before waiting for the
      // peer at the latest: deregistration waits for them, so they must not outlast the copies by
      // an idle period or a long stream of further writes.
      if (!gpuLeases_.empty()) {
        pollfd pfd{in_.fd(), POLLIN, 0};
        if (gpuDelivery_.done()) {
          gpuLeases_.clear();
        } else if (::poll(&pfd, 1, 0) == 0) {
          landGpuWritesFromThread();
        }
      }
      in_.recvAll(&message, sizeof(message), Deadline::never());
      switch (message.type) {
        case EthernetMessage::Write:
        case EthernetMessage::Update:
          if (message.type == EthernetMessage::Update && message.size != sizeof(uint64_t)) {
            MSCCLPP_THROW(InvalidUsage, describe(), ": malformed update of ", message.size, " bytes");
          }
          // Updates are stored whole as one 8-byte word, which needs its natural alignment; the
          // sender checks this too, but the receiver must not rely on the sender.
          if (message.type == EthernetMessage::Update && message.addr % sizeof(uint64_t) != 0) {
            MSCCLPP_THROW(InvalidUsage, describe(), ": the peer sent an update to 0x", std::hex, message.addr,
                          ", which is not 8-byte aligned; connection closed");
          }
          receiveIntoFromThread(message);
          break;
        case EthernetMessage::Flush:
          // Everything before this message has been received; confirm once it is in memory.
          landGpuWritesFromThread();
          in_.sendAll(&message.addr, sizeof(message.addr), Deadline::never());
          break;
        default:
          MSCCLPP_THROW(InvalidUsage, describe(), ": unknown message type ", message.type);
      }
    }
  } catch (const std::exception& e) {
    try {
      landGpuWritesFromThread();
    } catch (const std::exception& drainError) {
      LOG_WARN(CONN, describe(), ": waiting for the GPU copies of received writes failed: ", drainError.what());
    }
    gpuLeases_.clear();
    if (closing_) return;
    const Error* error = dynamic_cast<const Error*>(&e);
    if (writeAborted_) {
      LOG_WARN(CONN, describe(), ": receiver stopped: a write was failed because its memory was deregistered");
    } else if (error && error->getErrorCode() == ErrorCode::Aborted) {
      LOG_INFO(CONN, describe(), ": the peer closed the connection");
    } else {
      LOG_WARN(CONN, describe(), ": receiver stopped: ", e.what());
    }
    latchError(std::current_exception());
    // Close our side so the peer learns too, instead of waiting on a connection nobody reads.
    in_.shutdown();
  }
}

}  // namespace mscclpp
