// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_CONNECTION_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_CONNECTION_HPP_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mscclpp/gpu_utils.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "memory/memory_accounting.hpp"
#include "transport/connection.hpp"
#include "transport/ethernet/ethernet_endpoint.hpp"
#include "transport/ethernet/ethernet_memory.hpp"
#include "transport/ethernet/gpu_delivery.hpp"

namespace mscclpp {

/// One message on an Ethernet data socket, followed by `size` payload bytes for writes and updates.
struct EthernetMessage {
  enum Type : uint32_t { Write = 1, Update = 2, Flush = 3 };
  uint32_t type;
  uint32_t reserved;
  uint64_t addr;  // destination in the receiver's address space; for Flush, the sequence number
  uint64_t size;
};

/// Pinned host memory for staging GPU data (the library's pinned allocator, gpuCallocHost, unmapped);
/// allocated on first use.
class StagingBuffer {
 public:
  /// `accounting` (may be null) is charged the bytes once they are allocated.
  StagingBuffer(size_t bytes, std::shared_ptr<MemoryAccounting> accounting)
      : bytes_(bytes), accounting_(std::move(accounting)) {}
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  char* get();
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
  std::shared_ptr<MemoryAccounting> accounting_;
  MemoryAccounting::Charge charge_;  // declared first: the charge ends after the memory is freed
  detail::UniqueGpuHostPtr<char> buffer_;
};

/// How long a write may go without the peer taking a byte: env()->ethernetWriteTimeoutSec unless
/// replaced for the rest of the process (tests shorten it); negative: no limit.
std::chrono::milliseconds ethernetWriteStallLimit();
void setEthernetWriteStallLimit(std::chrono::milliseconds limit);

/// A connection over two TCP streams: on `out_` this side sends messages and reads flush acks; on `in_`
/// a receiver thread reads the peer's messages, writes them into local registered memory in order, and
/// answers flushes. The receiver checks every destination against the memory its Context registered
/// for Ethernet and holds a lease on it until the write has landed (ethernet_memory.hpp).
/// The receiver thread first accepts `in_` from the endpoint's listener; until the peer connects,
/// messages sent here wait in the peer's socket buffers.
class EthernetConnection : public BaseConnection, public EthernetWriteTarget {
 public:
  /// Payload moves in chunks of this size: the staging unit for GPU memory.
  static constexpr size_t kChunkBytes = 4 << 20;
  /// Host-memory messages up to this size are sent with their header in one system call.
  static constexpr size_t kCoalesceBytes = 64 << 10;

  /// `out` is connected; the incoming stream is accepted from `listener` (the peer's hello carries
  /// `peerNonce`) by the receiver thread before `acceptDeadline`.
  EthernetConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote, TcpSocket out,
                     std::shared_ptr<EthernetListener> listener, uint64_t peerNonce, Deadline acceptDeadline);
  ~EthernetConnection() override;

  std::string describe() const override;
  void abortWrite(const std::string& why) noexcept override;

 protected:
  void writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src, uint64_t srcOffset,
                     uint64_t size) override;
  void updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                             uint64_t newValue) override;
  void flushFromUser(int64_t timeoutUsec) override;

 private:
  void sendMessage(const EthernetMessage& message, const void* payload, int srcDeviceId);
  void receiveLoopFromThread(std::shared_ptr<EthernetListener> listener, uint64_t peerNonce, Deadline acceptDeadline);
  void receiveIntoFromThread(const EthernetMessage& message);
  /// Waits for the GPU copies of earlier writes and ends their leases.
  void landGpuWritesFromThread();
  /// Sends on out_ without waiting longer than the stall limit for progress; a failure latches.
  void sendOrLatch(const void* data, size_t size);

  std::string peer_;
  TcpSocket out_;
  std::mutex inMutex_;  // in_ is set by the receiver thread and shut down by the destructor
  TcpSocket in_;
  std::mutex sendMutex_;            // one message at a time on out_
  std::mutex flushMutex_;           // one flush waits for acks at a time
  std::vector<char> smallMessage_;  // header + payload of a coalesced message (under sendMutex_)
  uint64_t nextFlushSeq_ = 1;
  uint64_t ackedFlushSeq_ = 0;
  StagingBuffer sendStaging_;
  StagingBuffer recvStaging_;
  GpuDelivery gpuDelivery_;                               // the receiver's path into GPU memory, through recvStaging_
  std::shared_ptr<EthernetMemoryRegistry> registry_;      // what the peer may write into: the Context's
  std::vector<EthernetMemoryRegistry::Lease> gpuLeases_;  // writes whose GPU copies may be in flight
  std::chrono::milliseconds stallLimit_;
  std::atomic<bool> writeAborted_{false};  // abortWrite() shut in_ down
  std::atomic<bool> closing_{false};
  std::thread receiver_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_CONNECTION_HPP_
