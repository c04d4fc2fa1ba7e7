// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Built with MSCCLPP_USE_IB only; ib_unavailable.cc stands in for it otherwise.
#if defined(MSCCLPP_USE_IB)

#include "transport/ib/ib_connection.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>

#include "bootstrap/socket.hpp"
#include "common/checks.hpp"
#include "memory/registered_memory.hpp"
#include "transport/ib/ibverbs.hpp"

namespace mscclpp {
namespace {

using Clock = std::chrono::steady_clock;

// How long a write waits for room in a full send queue. A live RC peer completes or fails every work
// request within the retry budget (about 7 s at the timeout and retry counts set in ib_qp.cc), so
// reaching this means the provider itself stopped answering.
constexpr std::chrono::seconds kRoomTimeout(30);
// The receiver thread sleeps this long between empty polls of the receive CQ.
constexpr std::chrono::microseconds kReceiverIdle(50);

const IbMemory& ibMemoryOf(const RegisteredMemory& memory, Transport transport, const char* what) {
  TransportMemory* entry = RegisteredMemoryAccess::impl(memory)->find(transport);
  MSCCLPP_ASSERT(entry != nullptr, what, " has no ", transport, " entry");
  return static_cast<const IbMemory&>(*entry);
}

const char* opcodeName(ibv_wc_opcode opcode) {
  switch (opcode) {
    case IBV_WC_RDMA_WRITE:
      return "RDMA write";
    case IBV_WC_FETCH_ADD:
      return "RDMA atomic fetch-add";
    case IBV_WC_RECV_RDMA_WITH_IMM:
      return "receive of a write with immediate";
    default:
      return "work request";
  }
}

/// What a failed completion means to the caller. Exhausted transport retries on a connected RC QP
/// mean the peer stopped answering: its process died, its QP went to error, or the path to it was lost.
/// The connection was ended from the other side, which every transport reports as Aborted.
ErrorCode errorCodeOf(ibv_wc_status status) {
  return status == IBV_WC_RETRY_EXC_ERR ? ErrorCode::Aborted : ErrorCode::SystemError;
}

}  // namespace

IbConnection::IbConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote,
                           std::shared_ptr<IbQp> qp, const IbQpInfo& remoteInfo)
    : BaseConnection(std::move(context), local, remote),
      qp_(std::move(qp)),
      atomics_(qp_->info().atomics && remoteInfo.atomics),
      capacity_(std::min(qp_->config().maxCqSize, qp_->config().maxSendWr)),
      slots_(capacity_, 0) {
  if (maxWriteQueueSize_ <= 0) maxWriteQueueSize_ = qp_->config().maxCqSize;
  slotsMr_ = std::make_unique<IbMr>(qp_->device(), slots_.data(), slots_.size() * sizeof(uint64_t), -1);
  if (!atomics_) {
    // Every write with immediate from the peer consumes one receive; keep as many posted as the peer
    // can have outstanding. Posted before the QP leaves INIT so the first update finds them.
    std::vector<ibv_recv_wr> recvs(capacity_);
    for (int i = 0; i < capacity_; ++i) recvs[i].next = i + 1 < capacity_ ? &recvs[i + 1] : nullptr;
    qp_->postRecv(recvs.data());
  }
  qp_->connect(remoteInfo);
  LOG_INFO(CONN, "IB connection ", qp_->device()->name(), " QP ", qp_->info().qpn, " -> QP ", remoteInfo.qpn,
           atomics_ ? " (atomics)" : " (writes with immediate: a side has no RDMA atomics)");
  if (!atomics_) receiver_ = std::thread([this] { receiveLoopFromThread(); });
}

IbConnection::~IbConnection() {
  closing_ = true;
  if (receiver_.joinable()) receiver_.join();
}

std::string IbConnection::describe() const {
  return concat(transport(), " connection (", qp_->device()->name(), " QP ", qp_->info().qpn, ") to ",
                remoteTransport(), " endpoint of process ", std::hex, remoteEndpoint_.pidHash());
}

void IbConnection::writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src,
                                 uint64_t srcOffset, uint64_t size) {
  const IbMemory& srcMem = ibMemoryOf(src, transport(), "Connection::write source");
  const IbMemory& dstMem = ibMemoryOf(dst, remoteTransport(), "Connection::write destination");
  MSCCLPP_ASSERT(srcMem.mr() != nullptr, "the source's IB entry has no memory region");
  const uint64_t maxMsg = qp_->maxMessageBytes();
  const size_t count = (size + maxMsg - 1) / maxMsg;
  std::vector<ibv_send_wr> wrs(count);
  std::vector<ibv_sge> sges(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t off = i * maxMsg;
    sges[i].addr = srcMem.addr() + srcOffset + off;
    sges[i].length = static_cast<uint32_t>(std::min(maxMsg, size - off));
    sges[i].lkey = srcMem.mr()->lkey();
    wrs[i].opcode = IBV_WR_RDMA_WRITE;
    wrs[i].send_flags = IBV_SEND_SIGNALED;
    wrs[i].wr.rdma.remote_addr = dstMem.addr() + dstOffset + off;
    wrs[i].wr.rdma.rkey = dstMem.rkey();
  }
  std::lock_guard<std::mutex> lock(sendMutex_);
  postAll(wrs, sges);
}

void IbConnection::updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                                         uint64_t newValue) {
  const IbMemory& dstMem = ibMemoryOf(dst, remoteTransport(), "Connection::updateAndSync destination");
  std::vector<ibv_send_wr> wrs(1);
  std::vector<ibv_sge> sges(1);
  std::lock_guard<std::mutex> lock(sendMutex_);
  const uint64_t oldValue = *src;
  *src = newValue;
  // A slot is reused only after capacity_ more work requests were posted; since no more than capacity_
  // are ever outstanding and completions come in order, the one that used it has completed.
  uint64_t* slot = &slots_[updates_++ % slots_.size()];
  sges[0].addr = reinterpret_cast<uint64_t>(slot);
  sges[0].length = sizeof(uint64_t);
  sges[0].lkey = slotsMr_->lkey();
  wrs[0].send_flags = IBV_SEND_SIGNALED;
  if (atomics_) {
    wrs[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
    wrs[0].wr.atomic.remote_addr = dstMem.addr() + dstOffset;
    wrs[0].wr.atomic.rkey = dstMem.rkey();
    wrs[0].wr.atomic.compare_add = newValue - oldValue;
  } else {
    *slot = newValue;
    wrs[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wrs[0].imm_data = htonl(static_cast<uint32_t>(newValue));
    wrs[0].wr.rdma.remote_addr = dstMem.addr() + dstOffset;
    wrs[0].wr.rdma.rkey = dstMem.rkey();
  }
  postAll(wrs, sges);
}

void IbConnection::flushFromUser(int64_t timeoutUsec) {
  const bool bounded = timeoutUsec >= 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(bounded ? timeoutUsec : 0);
  std::lock_guard<std::mutex> lock(sendMutex_);
  while (outstanding_ > 0) {
    pollOnce();
    if (outstanding_ > 0 && bounded && Clock::now() >= deadline) {
      MSCCLPP_THROW(Timeout, "IB flush on ", describe(), ": ", outstanding_,
                    " work request(s) still outstanding after ", timeoutUsec, " us");
    }
  }
}

void IbConnection::postAll(std::vector<ibv_send_wr>& wrs, std::vector<ibv_sge>& sges) {
  const int perSend = std::min(qp_->config().maxWrPerSend, capacity_);
  const Deadline deadline = Deadline::after(kRoomTimeout);
  for (size_t first = 0; first < wrs.size(); first += perSend) {
    const size_t last = std::min(wrs.size(), first + perSend);
    for (size_t i = first; i < last; ++i) {
      wrs[i].wr_id = i;
      wrs[i].sg_list = &sges[i];
      wrs[i].num_sge = 1;
      wrs[i].next = i + 1 < last ? &wrs[i + 1] : nullptr;
    }
    const int chain = static_cast<int>(last - first);
    waitUntilOutstandingAtMost(capacity_ - chain, deadline, "room in the send queue");
    qp_->postSend(&wrs[first]);
    outstanding_ += chain;
  }
}

void IbConnection::waitUntilOutstandingAtMost(int limit, const Deadline& deadline, const char* what) {
  while (outstanding_ > limit) {
    pollOnce();
    if (outstanding_ > limit && deadline.expired()) {
      MSCCLPP_THROW(Timeout, "IB ", describe(), ": no ", what, " after ", kRoomTimeout.count(), " s (", outstanding_,
                    " work requests outstanding)");
    }
  }
}

void IbConnection::pollOnce() {
  std::vector<ibv_wc> wcs(qp_->config().maxCqPollNum);
  const int n = qp_->pollSend(wcs.data(), static_cast<int>(wcs.size()));
  outstanding_ -= n;
  for (int i = 0; i < n; ++i) {
    if (wcs[i].status == IBV_WC_SUCCESS) continue;
    const ErrorCode code = errorCodeOf(wcs[i].status);
    Error error(
        concat("IB ", opcodeName(wcs[i].opcode), " failed on ", describe(), ": ", ibv().wcStatusStr(wcs[i].status),
               " (status ", static_cast<int>(wcs[i].status), ", vendor error 0x", std::hex, wcs[i].vendor_err, ")",
               code == ErrorCode::Aborted
                   ? ": the peer stopped answering (its process died, its QP is in error, or the path is lost)"
                   : ""),
        code);
    latchError(std::make_exception_ptr(error));
    throw error;
  }
}

void IbConnection::receiveLoopFromThread() {
  std::vector<ibv_wc> wcs(qp_->config().maxCqPollNum);
  ibv_recv_wr recv{};
  try {
    while (!closing_) {
      const int n = qp_->pollRecv(wcs.data(), static_cast<int>(wcs.size()));
      for (int i = 0; i < n; ++i) {
        if (wcs[i].status != IBV_WC_SUCCESS) {
          // A flushed receive follows an error of the QP, which the send side reports with its cause.
          if (closing_ || wcs[i].status == IBV_WC_WR_FLUSH_ERR) return;
          MSCCLPP_THROW(SystemError, "IB ", opcodeName(wcs[i].opcode), " failed on ", describe(), ": ",
                        ibv().wcStatusStr(wcs[i].status));
        }
        qp_->postRecv(&recv);
      }
      if (n == 0) std::this_thread::sleep_for(kReceiverIdle);
    }
  } catch (...) {
    latchError(std::current_exception());
  }
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_USE_IB)
