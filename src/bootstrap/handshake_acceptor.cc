// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "bootstrap/handshake_acceptor.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/checks.hpp"

namespace mscclpp {

using Clock = std::chrono::steady_clock;

std::string describeAcceptedPeer(const SocketAddress& peer) {
  if (peer.sa.sa_family == AF_INET || peer.sa.sa_family == AF_INET6) return toString(peer);
  return "a local client";
}

HandshakeAcceptor::HandshakeAcceptor(int listenFd, Options options)
    : listenFd_(listenFd), options_(std::move(options)) {
  MSCCLPP_ASSERT(options_.judge && options_.firstRead > 0 && options_.maxPending > 0, "HandshakeAcceptor: bad options");
}

void HandshakeAcceptor::fillPollFds(pollfd* out) const {
  out[0] = {listenFd_, POLLIN, 0};
  for (size_t i = 0; i < pending_.size(); ++i) out[1 + i] = {pending_[i].fd.get(), POLLIN, 0};
}

Deadline HandshakeAcceptor::nextExpiry() const {
  Deadline earliest = Deadline::never();
  const auto now = Clock::now();
  for (const auto& p : pending_) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(p.deadline - now);
    earliest = earliest.min(Deadline::after(std::max(left, std::chrono::milliseconds(0))));
  }
  return earliest;
}

void HandshakeAcceptor::drop(const Pending& p, const std::string& why) const {
  if (options_.onDrop) options_.onDrop(describeAcceptedPeer(p.peer), why);
}

bool HandshakeAcceptor::readFrom(Pending& p, std::vector<Accepted>& accepted) {
  while (p.bytes.size() < p.need) {
    char buf[256];
    const size_t want = std::min(sizeof(buf), p.need - p.bytes.size());
    ssize_t n = ::recv(p.fd.get(), buf, want, MSG_DONTWAIT);
    if (n > 0) {
      p.bytes.insert(p.bytes.end(), buf, buf + n);
      if (p.bytes.size() < p.need) continue;
      Verdict verdict = options_.judge(p.bytes);
      if (verdict.kind == Verdict::Reject) {
        drop(p, verdict.why);
        return false;
      }
      if (verdict.kind == Verdict::Accept) {
        accepted.push_back(Accepted{std::move(p.fd), p.peer, std::move(p.bytes)});
        return false;
      }
      MSCCLPP_ASSERT(verdict.need > p.bytes.size(), "HandshakeAcceptor: the judge asked for no more bytes");
      p.need = verdict.need;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n == 0 && closedBetweenHellos(p)) return false;
    drop(p, n == 0 ? concat("closed before completing its ", options_.what, " (after ", p.bytes.size(), " bytes)")
                   : concat("failed before completing its ", options_.what, " (", errnoName(errno), ")"));
    return false;
  }
  return true;
}

void HandshakeAcceptor::reapClosed() {
  std::vector<pollfd> fds(pending_.size());
  for (size_t i = 0; i < pending_.size(); ++i) fds[i] = {pending_[i].fd.get(), POLLIN, 0};
  if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return;
  std::vector<Accepted> accepted;
  std::vector<Pending> still;
  for (size_t i = 0; i < pending_.size(); ++i) {
    // Only closed connections are reaped here: a hello that completes is judged on the next process().
    if ((fds[i].revents & (POLLHUP | POLLERR)) || (fds[i].revents & POLLIN && [&] {
          char byte;
          ssize_t n = ::recv(pending_[i].fd.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        }())) {
      if (!closedBetweenHellos(pending_[i])) drop(pending_[i], concat("closed before completing its ", options_.what));
      continue;
    }
    still.push_back(std::move(pending_[i]));
  }
  pending_ = std::move(still);
}

void HandshakeAcceptor::acceptNew() {
  for (;;) {
    SocketAddress peer = emptySocketAddress();
    sockaddr_storage storage{};
    socklen_t len = sizeof(storage);
    int fd = ::accept4(listenFd_, reinterpret_cast<sockaddr*>(&storage), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      // A connection that died in the backlog is the client's problem, not the listener's.
      if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM) continue;
      // Out of descriptors: leave the rest in the backlog (the pending set shrinks as hellos end), and
      // back off briefly so that the caller's poll does not spin on the still readable listener.
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;
      }
      throw SysError("accepting a connection failed", err);
    }
    if (storage.ss_family == AF_INET || storage.ss_family == AF_INET6) {
      std::memcpy(&peer, &storage, std::min(sizeof(peer), static_cast<size_t>(len)));
    }
    Pending p{UniqueFd(fd), peer, {}, options_.firstRead, Clock::now() + options_.helloTimeout, false};
    if (options_.screen) {
      std::string why = options_.screen(fd);
      if (!why.empty()) {
        drop(p, why);
        continue;
      }
    }
    if (pending_.size() >= options_.maxPending) reapClosed();
    if (pending_.size() >= options_.maxPending) {
      drop(p, concat(options_.maxPending, " connections are already waiting to complete their ", options_.what));
      continue;
    }
    p.bytes.reserve(p.need);
    pending_.push_back(std::move(p));
  }
}

std::vector<HandshakeAcceptor::Accepted> HandshakeAcceptor::process(const pollfd* fds) {
  std::vector<Accepted> accepted;
  const auto now = Clock::now();
  std::vector<Pending> still;
  // Hellos first, so connections that closed meanwhile are gone before new ones are counted.
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (fds[1 + i].revents && !readFrom(p, accepted)) continue;
    if (now >= p.deadline) {
      drop(p, concat("no ", options_.what, " within ", options_.helloTimeout.count(), " ms"));
      continue;
    }
    still.push_back(std::move(p));
  }
  pending_ = std::move(still);
  if (!fds[0].revents) return accepted;
  const size_t firstNew = pending_.size();
  acceptNew();
  // A hello usually arrives with its connection: read it now rather than after another poll.
  still.clear();
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (i >= firstNew && !readFrom(pending_[i], accepted)) continue;
    still.push_back(std::move(pending_[i]));
  }
  pending_ = std::move(still);
  return accepted;
}

std::vector<HandshakeAcceptor::Accepted> HandshakeAcceptor::step(std::chrono::milliseconds wait) {
  std::vector<pollfd> fds(pollCount());
  fillPollFds(fds.data());
  Deadline until = Deadline::after(wait).min(nextExpiry());
  int rc = ::poll(fds.data(), fds.size(), until.pollTimeoutMs());
  if (rc < 0) {
    if (errno != EINTR) throw SysError("poll() while accepting connections failed", errno);
    for (auto& f : fds) f.revents = 0;
  }
  return process(fds.data());
}

void HandshakeAcceptor::adopt(UniqueFd fd, const SocketAddress& peer) {
  pending_.push_back(Pending{std::move(fd), peer, {}, options_.firstRead, Clock::now() + options_.helloTimeout, true});
}

void HandshakeAcceptor::clear(const std::string& why) {
  for (const auto& p : pending_) drop(p, why);
  pending_.clear();
}

}  // namespace mscclpp
