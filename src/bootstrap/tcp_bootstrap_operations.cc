// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The operations of an initialized bootstrap: point-to-point messages over one stream per
// (direction, peer, tag), opened by the sender on first use, and the ring collectives.

#include <poll.h>

#include <algorithm>
#include <cstring>

#include "bootstrap/tcp_bootstrap_impl.hpp"
#include "common/checks.hpp"

namespace mscclpp {

using namespace tcp_bootstrap;

void TcpBootstrap::Impl::send(const void* data, int size, int peer, int tag) {
  checkReady("send");
  checkPeer("send", peer);
  MSCCLPP_CHECK_USAGE(size >= 0 && (data || size == 0), "TcpBootstrap::send on rank ", rank_, ": bad buffer (", data,
                      ", ", size, " bytes)");
  // Error context is built only when there is an error: formatting it costs as much as a message.
  auto doing = [&] { return concat("send to ", describePeer(peer), " tag ", tag); };
  if (abortedFlag_.load()) throwIfAborted(doing());
  const Deadline deadline = opDeadline();
  auto ch = channel(sendChannels_, peer, tag);
  std::lock_guard<std::mutex> lock(ch->mutex);
  try {
    if (!ch->socket) ch->socket = openConnection(peer, peers_[peer].listen, ConnKind::Data, tag, deadline);
    sendFrame(*ch->socket, data, size, deadline);
  } catch (const std::exception& e) {
    fail(e, doing());
  }
}

void TcpBootstrap::Impl::recv(void* data, int size, int peer, int tag) {
  checkReady("recv");
  checkPeer("recv", peer);
  MSCCLPP_CHECK_USAGE(size >= 0 && (data || size == 0), "TcpBootstrap::recv on rank ", rank_, ": bad buffer (", data,
                      ", ", size, " bytes)");
  auto doing = [&] { return concat("recv from ", describePeer(peer), " tag ", tag); };
  if (abortedFlag_.load()) throwIfAborted(doing());
  const Deadline deadline = opDeadline();
  auto ch = channel(recvChannels_, peer, tag);
  std::lock_guard<std::mutex> lock(ch->mutex);
  int tooLong = 0;
  try {
    if (!ch->socket) ch->socket = waitIncoming(ConnKind::Data, peer, tag, deadline);
    recvFrame(*ch->socket, data, size, deadline, &tooLong);
  } catch (const std::exception& e) {
    fail(e, doing());
  }
  MSCCLPP_CHECK_USAGE(tooLong == 0, "TcpBootstrap::recv on rank ", rank_, ": the message from rank ", peer, " tag ",
                      tag, " is ", tooLong, " bytes, longer than the ", size, "-byte buffer (the message was dropped)");
}

void TcpBootstrap::Impl::allGather(void* all, int size) {
  checkReady("allGather");
  MSCCLPP_CHECK_USAGE(size >= 0 && (all || size == 0), "TcpBootstrap::allGather on rank ", rank_, ": bad buffer");
  if (nRanks_ == 1) return;
  if (abortedFlag_.load()) throwIfAborted("allGather");
  const Deadline deadline = opDeadline();
  char* base = static_cast<char*>(all);
  std::lock_guard<std::mutex> ring(ringMutex_);
  try {
    for (int step = 0; step < nRanks_ - 1; ++step) {
      int sendSlot = (rank_ - step + nRanks_) % nRanks_;
      int recvSlot = (rank_ - step - 1 + nRanks_) % nRanks_;
      ringExchange(base + size_t(sendSlot) * size, base + size_t(recvSlot) * size, size, deadline, "allGather");
    }
  } catch (const std::exception& e) {
    fail(e, "allGather");
  }
}

void TcpBootstrap::Impl::broadcast(void* data, int size, int root) {
  checkReady("broadcast");
  checkPeer("broadcast", root);
  MSCCLPP_CHECK_USAGE(size >= 0 && (data || size == 0), "TcpBootstrap::broadcast on rank ", rank_, ": bad buffer");
  if (nRanks_ == 1) return;
  const int next = (rank_ + 1) % nRanks_;
  const int prev = (rank_ - 1 + nRanks_) % nRanks_;
  auto doing = [&] {
    return concat("broadcast from rank ", root, " (ring: from ", describePeer(prev), " to ", describePeer(next), ")");
  };
  if (abortedFlag_.load()) throwIfAborted(doing());
  const Deadline deadline = opDeadline();
  std::lock_guard<std::mutex> ring(ringMutex_);
  try {
    if (rank_ != root) {
      int tooLong = 0;
      int got = recvFrame(*ringPrev_, data, size, deadline, &tooLong);
      if (got != size) {
        std::string message = concat("rank ", rank_, ": ", doing(), ": received ", got,
                                     " bytes where this rank expects ", size, "; every rank must pass the same size");
        abort(message);
        throw Error(message, ErrorCode::InvalidUsage);
      }
    }
    if (next != root) sendFrame(*ringNext_, data, size, deadline);
  } catch (const std::exception& e) {
    fail(e, doing());
  }
}

// ---------------------------------------------------------------------------------------------------
// connections

void TcpBootstrap::Impl::track(const std::shared_ptr<TcpSocket>& socket) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.push_back(socket);
  if (aborted_) socket->shutdown();
}

std::string TcpBootstrap::Impl::describePeer(int peer) const {
  if (peer >= 0 && peer < static_cast<int>(peers_.size()) && socketAddressLength(peers_[peer].listen) != 0) {
    return concat("rank ", peer, " (", toString(peers_[peer].listen), ")");
  }
  return concat("rank ", peer);
}

std::shared_ptr<TcpSocket> TcpBootstrap::Impl::openConnection(int peer, const SocketAddress& to, ConnKind kind, int tag,
                                                              const Deadline& deadline) {
  throwIfAborted(concat("connecting to rank ", peer));
  auto socket = std::make_shared<TcpSocket>(TcpSocket::connect(
      to, deadline, concat("opening a ", kindName(static_cast<uint32_t>(kind)), " connection to rank ", peer)));
  socket->setNoDelay();
  track(socket);
  // Every connection but the check-in carries the job's secret, which only ranks that checked in know.
  auto handshake = encodeHandshake({secret_.load(), static_cast<uint32_t>(kind), rank_, tag});
  socket->sendAll(handshake.data(), handshake.size(), deadline);
  return socket;
}

std::shared_ptr<TcpSocket> TcpBootstrap::Impl::waitIncoming(ConnKind kind, int peer, int tag,
                                                            const Deadline& deadline) {
  auto key = std::make_tuple(kind, peer, tag);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (aborted_) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": waiting for ", describePeer(peer),
                    " to connect: the bootstrap was aborted: ", abortReason_);
    }
    auto it = incoming_.find(key);
    if (it != incoming_.end()) {
      auto socket = it->second;
      incoming_.erase(it);
      claimed_.insert(key);
      return socket;
    }
    if (deadline.isNever()) {
      cv_.wait(lock);
    } else if (cv_.wait_until(lock, deadline.at()) == std::cv_status::timeout && deadline.expired()) {
      bool gone = peer >= 0 && peer < nRanks_ && departed_[peer];
      MSCCLPP_THROW(Timeout, "rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " waiting for ",
                    describePeer(peer), " to open its ", kindName(static_cast<uint32_t>(kind)), " connection",
                    kind == ConnKind::Data ? concat(" for tag ", tag) : std::string(), " to this rank at ",
                    toString(listener_.address()), gone ? " (that rank has already destroyed its bootstrap)" : "");
    }
  }
}

std::shared_ptr<Channel> TcpBootstrap::Impl::channel(std::map<std::pair<int, int>, std::shared_ptr<Channel>>& table,
                                                     int peer, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = table[{peer, tag}];
  if (!slot) slot = std::make_shared<Channel>();
  return slot;
}

// ---------------------------------------------------------------------------------------------------
// frames: [i32 length][bytes]

void TcpBootstrap::Impl::sendFrame(TcpSocket& socket, const void* data, int size, const Deadline& deadline) {
  int32_t length = size;
  // Small frames go out in one call: one segment, one wake-up at the receiver.
  if (size <= 4096) {
    char buf[4 + 4096];
    std::memcpy(buf, &length, 4);
    if (size > 0) std::memcpy(buf + 4, data, size);
    socket.sendAll(buf, 4 + size, deadline);
    return;
  }
  socket.sendAll(&length, 4, deadline);
  socket.sendAll(data, size, deadline);
}

int TcpBootstrap::Impl::recvFrame(TcpSocket& socket, void* data, int capacity, const Deadline& deadline, int* tooLong) {
  int32_t length = 0;
  socket.recvAll(&length, 4, deadline);
  if (length < 0) {
    MSCCLPP_THROW(RemoteError, "received a malformed frame header (length ", length, ")");
  }
  *tooLong = 0;
  if (length > capacity) {
    char sink[65536];
    for (int left = length; left > 0;) {
      int n = std::min<int>(left, sizeof(sink));
      socket.recvAll(sink, n, deadline);
      left -= n;
    }
    *tooLong = length;
    return length;
  }
  socket.recvAll(data, length, deadline);
  return length;
}

// One step of a ring collective: send a frame to the successor while receiving one of the same size
// from the predecessor. Both directions progress together, so no rank can block the ring by filling
// its socket buffers first.
void TcpBootstrap::Impl::ringExchange(const char* sendData, char* recvData, int size, const Deadline& deadline,
                                      const char* op) {
  const int next = (rank_ + 1) % nRanks_;
  const int prev = (rank_ - 1 + nRanks_) % nRanks_;
  int32_t outHeader = size, inHeader = 0;
  const size_t total = 4 + static_cast<size_t>(size);
  size_t outDone = 0, inDone = 0;
  // A small frame leaves as one contiguous buffer: one segment, one wake-up at the successor.
  char small[4 + 4096];
  const bool contiguous = size <= 4096;
  if (contiguous) {
    std::memcpy(small, &outHeader, 4);
    if (size > 0) std::memcpy(small + 4, sendData, size);
  }
  // Socket errors only know addresses; the ring knows which rank is behind each.
  auto naming = [&](int peer, auto&& io) -> size_t {
    try {
      return io();
    } catch (const Error& e) {
      if (e.getErrorCode() != ErrorCode::Aborted) throw;
      throwIfAborted(op);
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", op, ": ", describePeer(peer),
                    " closed its ring connection (it failed, exited or was killed)");
    }
  };
  while (outDone < total || inDone < total) {
    bool progress = false;
    if (outDone < total) {
      size_t n = naming(next, [&] {
        if (contiguous) return ringNext_->trySend(small + outDone, total - outDone);
        return outDone < 4 ? ringNext_->trySend(reinterpret_cast<char*>(&outHeader) + outDone, 4 - outDone)
                           : ringNext_->trySend(sendData + (outDone - 4), total - outDone);
      });
      outDone += n;
      progress |= n > 0;
    }
    if (inDone < total) {
      size_t n = naming(prev, [&] {
        return inDone < 4 ? ringPrev_->tryRecv(reinterpret_cast<char*>(&inHeader) + inDone, 4 - inDone)
                          : ringPrev_->tryRecv(recvData + (inDone - 4), total - inDone);
      });
      inDone += n;
      progress |= n > 0;
      if (inDone == 4 && n > 0 && inHeader != size) {
        std::string message =
            concat("rank ", rank_, ": ", op, ": ", describePeer(prev), " sent ", inHeader,
                   " bytes where this rank expects ", size, "; every rank must pass the same size to a collective");
        abort(message);
        throw Error(message, ErrorCode::InvalidUsage);
      }
    }
    if (progress) continue;
    pollfd fds[2];
    int count = 0;
    if (outDone < total) fds[count++] = {ringNext_->fd(), POLLOUT, 0};
    if (inDone < total) fds[count++] = {ringPrev_->fd(), POLLIN, 0};
    int rc = ::poll(fds, count, deadline.pollTimeoutMs());
    if (rc < 0 && errno != EINTR) throw SysError(concat("rank ", rank_, ": poll() in ", op, " failed"), errno);
    if (rc == 0 && deadline.expired()) {
      int waitedFor = inDone < total ? prev : next;
      MSCCLPP_THROW(Timeout, "rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " in ", op,
                    " waiting for ", describePeer(waitedFor),
                    inDone < total ? " to send its part" : " to take this rank's part");
    }
    if (ringNext_->isShutdown() || ringPrev_->isShutdown()) throwIfAborted(op);
  }
}

}  // namespace mscclpp
