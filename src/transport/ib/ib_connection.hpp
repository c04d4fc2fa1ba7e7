// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_IB_IB_CONNECTION_HPP_
#define MSCCLPP_TRANSPORT_IB_IB_CONNECTION_HPP_

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "transport/connection.hpp"
#include "transport/ib/ib_objects.hpp"

namespace mscclpp {

/// A connection over one RC queue pair. Every work request is signaled; `outstanding_` counts those
/// whose completion has not been polled yet, and never exceeds what the CQ and the send queue hold.
///   write: RDMA writes (split at the port's message size, chained up to maxWrPerSend).
///   updateAndSync: an RDMA atomic fetch-add of (new - old) where both devices have atomics; else an
///     RDMA write with immediate of the 8-byte value, whose receive completion at the peer comes after
///     all earlier data has been placed. The peer side then keeps receives posted from its own thread.
///   flush: polls completions until none is outstanding or the deadline passes.
class IbConnection : public BaseConnection {
 public:
  IbConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote,
               std::shared_ptr<IbQp> qp, const IbQpInfo& remoteInfo);
  ~IbConnection() override;

  std::string describe() const override;
  bool usesAtomics() const { return atomics_; }

 protected:
  void writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src, uint64_t srcOffset,
                     uint64_t size) override;
  void updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                             uint64_t newValue) override;
  void flushFromUser(int64_t timeoutUsec) override;

 private:
  /// Posts `wrs` in chains of maxWrPerSend, first polling completions until there is room.
  void postAll(std::vector<ibv_send_wr>& wrs, std::vector<ibv_sge>& sges);
  /// Polls one batch (at most maxCqPollNum); a failed completion latches and throws Error(SystemError).
  void pollOnce();
  void waitUntilOutstandingAtMost(int limit, const Deadline& deadline, const char* what);
  void receiveLoopFromThread();

  std::shared_ptr<IbQp> qp_;
  bool atomics_;
  int capacity_;  // most work requests outstanding at once
  std::mutex sendMutex_;
  int outstanding_ = 0;          // under sendMutex_
  uint64_t updates_ = 0;         // under sendMutex_: picks the next slot
  std::vector<uint64_t> slots_;  // atomic fetch results / values of writes with immediate, one per outstanding WR
  std::unique_ptr<IbMr> slotsMr_;
  std::atomic<bool> closing_{false};
  std::thread receiver_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IB_CONNECTION_HPP_
