// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/ethernet_connection.hpp"

#include <cstring>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/token_wait.hpp"
#include "gpu/gpu_checks.hpp"
#include "memory/local_memory_registry.hpp"
#include "memory/registered_memory.hpp"
#include "transport/context_impl.hpp"

namespace mscclpp {

StagingBuffer::~StagingBuffer() {
  if (buffer_) MSCCLPP_CUDA_IGNORE(cudaFreeHost(buffer_));
}

char* StagingBuffer::get() {
  if (!buffer_) {
    MSCCLPP_CUDATHROW(cudaHostAlloc(reinterpret_cast<void**>(&buffer_), bytes_, cudaHostAllocDefault));
    charge_ = MemoryAccounting::Charge(accounting_, &MemoryAccounting::hostPinnedBytes, bytes_);
  }
  return buffer_;
}

EthernetConnection::EthernetConnection(std::shared_ptr<Context> context, const Endpoint& local,
                                       const Endpoint& remote, TcpSocket out,
                                       std::shared_ptr<EthernetListener> listener, uint64_t peerNonce,
                                       Deadline acceptDeadline)
    : BaseConnection(std::move(context), local, remote),
      peer_(toString(out.peer())),
      out_(std::move(out)),
      sendStaging_(kChunkBytes, ContextAccess::impl(*context_).accounting),
      recvStaging_(kChunkBytes, ContextAccess::impl(*context_).accounting),
      gpuDelivery_(recvStaging_) {
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

void EthernetConnection::sendMessage(const EthernetMessage& message, const void* payload, int srcDeviceId) {
  const Deadline deadline = Deadline::never();
  std::lock_guard<std::mutex> lock(sendMutex_);
  const char* from = static_cast<const char*>(payload);
  if (srcDeviceId < 0 && message.size <= kCoalesceBytes) {
    // Small messages from host memory leave in one system call: latency is per call, not per byte.
    smallMessage_.resize(sizeof(message) + message.size);
    std::memcpy(smallMessage_.data(), &message, sizeof(message));
    if (message.size > 0) std::memcpy(smallMessage_.data() + sizeof(message), from, message.size);
    out_.sendAll(smallMessage_.data(), smallMessage_.size(), deadline);
    return;
  }
  out_.sendAll(&message, sizeof(message), deadline);
  for (uint64_t done = 0; done < message.size;) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, message.size - done));
    if (srcDeviceId >= 0) {
      // GPU source: stage through pinned memory (the socket cannot read device memory).
      CudaDeviceGuard guard(srcDeviceId);
      detail::gpuMemcpy(sendStaging_.get(), from + done, chunk, cudaMemcpyDeviceToHost);
      out_.sendAll(sendStaging_.get(), chunk, deadline);
    } else {
      out_.sendAll(from + done, chunk, deadline);
    }
    done += chunk;
  }
}

void EthernetConnection::writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src,
                                       uint64_t srcOffset, uint64_t size) {
  EthernetMessage message{EthernetMessage::Write, 0,
                          reinterpret_cast<uint64_t>(dst.originalDataPtr()) + dstOffset, size};
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

void EthernetConnection::receiveIntoFromThread(const EthernetMessage& message) {
  const Deadline deadline = Deadline::never();
  auto range = LocalMemoryRegistry::instance().find(message.addr, message.size);
  if (!range) {
    MSCCLPP_THROW(InvalidUsage, describe(), ": the peer wrote ", message.size, " bytes to 0x", std::hex, message.addr,
                  ", which is not memory registered in this process; connection closed");
  }
  char* dst = reinterpret_cast<char*>(message.addr);
  if (range->deviceId < 0) {
    if (message.type == EthernetMessage::Update) {
      uint64_t value = 0;
      in_.recvAll(&value, sizeof(value), deadline);
      // A host waiter that sees the token may read GPU memory written before it: land those first.
      gpuDelivery_.drain();
      // A host-side poller reads the token with an acquire load: store it whole, with release.
      __atomic_store_n(reinterpret_cast<uint64_t*>(dst), value, __ATOMIC_SEQ_CST);
      notifyTokenWritten(reinterpret_cast<uint64_t*>(dst));
      return;
    }
    in_.recvAll(dst, message.size, deadline);
    return;
  }
  if (message.type == EthernetMessage::Update) {
    uint64_t value = 0;
    in_.recvAll(&value, sizeof(value), deadline);
    gpuDelivery_.update(range->deviceId, reinterpret_cast<uint64_t*>(dst), value);
    return;
  }
  gpuDelivery_.write(range->deviceId, dst, message.size,
                     [&](char* buffer, size_t bytes) { in_.recvAll(buffer, bytes, deadline); });
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
      in_.recvAll(&message, sizeof(message), Deadline::never());
      switch (message.type) {
        case EthernetMessage::Write:
        case EthernetMessage::Update:
          if (message.type == EthernetMessage::Update && message.size != sizeof(uint64_t)) {
            MSCCLPP_THROW(InvalidUsage, describe(), ": malformed update of ", message.size, " bytes");
          }
          receiveIntoFromThread(message);
          break;
        case EthernetMessage::Flush:
          // Everything before this message has been received; confirm once it is in memory.
          gpuDelivery_.drain();
          in_.sendAll(&message.addr, sizeof(message.addr), Deadline::never());
          break;
        default:
          MSCCLPP_THROW(InvalidUsage, describe(), ": unknown message type ", message.type);
      }
    }
  } catch (const std::exception& e) {
    if (closing_) return;
    const Error* error = dynamic_cast<const Error*>(&e);
    if (error && error->getErrorCode() == ErrorCode::Aborted) {
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
