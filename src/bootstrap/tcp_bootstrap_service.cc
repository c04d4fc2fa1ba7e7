// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The bootstrap's service thread and its failure handling: the thread accepts connections on the
// rank's listener (dropping strangers with a WARN) and watches the liveness streams to the ring
// neighbours. A neighbour that vanishes without saying goodbye, or that aborted, makes this rank
// abort: every socket is shut down and the neighbours are told, so the failure travels around the
// ring to ranks that had no direct connection with the one that failed.

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "bootstrap/tcp_bootstrap_impl.hpp"
#include "common/checks.hpp"

namespace mscclpp {

using namespace tcp_bootstrap;

// ---------------------------------------------------------------------------------------------------
// failure

void TcpBootstrap::Impl::throwIfAborted(const std::string& doing) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) {
    MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", doing, ": the bootstrap was aborted: ", abortReason_);
  }
}

void TcpBootstrap::Impl::fail(const std::exception& e, const std::string& doing) {
  const Error* error = dynamic_cast<const Error*>(&e);
  if (error && error->getErrorCode() == ErrorCode::InvalidUsage) throw *error;
  {
    // A failure caused by an earlier abort (our own shutdown) is reported as that abort.
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", doing, " interrupted: the bootstrap was aborted: ", abortReason_);
    }
  }
  if (error && error->getErrorCode() == ErrorCode::Aborted) {
    // A peer that closed its connection has usually just aborted and said why on the liveness stream;
    // give the service thread a moment to hear it, so the error names the failure that started it all.
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, kCauseGrace, [&] { return aborted_; });
    if (aborted_) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", doing, " interrupted: the bootstrap was aborted: ", abortReason_);
    }
  }
  std::string text = plainMessage(e);
  // Messages built in this file already start with "rank N:"; socket-level ones get the context added.
  std::string message = text;
  if (text.rfind(concat("rank ", rank_, ":"), 0) != 0) {
    message =
        error && error->getErrorCode() == ErrorCode::Timeout
            ? concat("rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " in ", doing, " (", text, ")")
            : concat("rank ", rank_, ": ", doing, " failed: ", text);
  }
  abort(message);
  if (error) throw Error(message, error->getErrorCode());
  if (auto sys = dynamic_cast<const SysError*>(&e)) throw SysError(message, sys->getErrorCode());
  throw Error(message, ErrorCode::InternalError);
}

void TcpBootstrap::Impl::abort(const std::string& reason, const std::string& rootCause) {
  std::vector<std::shared_ptr<TcpSocket>> sockets, liveness;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) return;
    aborted_ = true;
    abortedFlag_.store(true);
    abortReason_ = reason;
    rootCause_ = rootCause.empty() ? reason : rootCause;
    sockets = sockets_;
    liveness = livenessSockets_;
  }
  LOG_WARN(NET, "bootstrap of rank ", rank_, " aborted, closing its connections: ", reason);
  std::string cause = rootCause_.substr(0, kMaxCauseText);
  ByteWriter notice;
  notice.put(kAbortNotice).put(static_cast<uint32_t>(cause.size())).putBytes(cause.data(), cause.size());
  for (auto& s : liveness) {
    try {
      // A few hundred bytes on an idle stream: the socket buffer takes it whole without waiting.
      s->sendAll(notice.bytes().data(), notice.bytes().size(), Deadline::after(std::chrono::milliseconds(100)));
    } catch (const std::exception&) {
      // The neighbour is gone already; the shutdown below is all it could have learned.
    }
  }
  for (auto& s : sockets) s->shutdown();
  listener_.shutdown();
  cv_.notify_all();
  wakeService();
}

// ---------------------------------------------------------------------------------------------------
// service thread: accepts connections and watches the liveness streams

void TcpBootstrap::Impl::startService() {
  wakeFd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeFd_.valid()) throw SysError(concat("rank ", rank_, ": eventfd() for the bootstrap service failed"), errno);
  service_ = std::thread([this] { serviceLoop(); });
}

void TcpBootstrap::Impl::wakeService() {
  if (!wakeFd_.valid()) return;
  uint64_t one = 1;
  MSCCLPP_SYSCHECK_IGNORE(NET, ::write(wakeFd_.get(), &one, sizeof(one)));
}

void TcpBootstrap::Impl::stopService() {
  stopping_.store(true);
  wakeService();
  if (service_.joinable()) service_.join();
}

std::function<void(const std::string&, const std::string&)> TcpBootstrap::Impl::dropReporter(
    const std::string& where) const {
  return [rank = rank_, where](const std::string& from, const std::string& why) {
    LOG_WARN(NET, "rank ", rank, ": dropped a connection from ", from, " to ", where, ": ", why);
  };
}

void TcpBootstrap::Impl::setSecret(uint64_t secret) {
  secret_.store(secret);
  wakeService();
}

void TcpBootstrap::Impl::admit(std::shared_ptr<TcpSocket> socket, const Handshake& h,
                               std::vector<std::pair<std::shared_ptr<TcpSocket>, int>>& liveness,
                               std::vector<std::pair<std::shared_ptr<TcpSocket>, Handshake>>& held) {
  const std::string from = toString(socket->peer());
  auto drop = [&](const std::string& why) {
    LOG_WARN(NET, "rank ", rank_, ": dropped a connection from ", from, ": ", why);
  };
  const uint64_t secret = secret_.load();
  if (secret == 0) {
    // A neighbour may connect before rank 0's answer has reached this rank: judge it once it has.
    if (held.size() >= kMaxPendingConnections) {
      return drop(concat(kMaxPendingConnections, " connections already wait for this rank to learn the job's secret"));
    }
    held.emplace_back(std::move(socket), h);
    return;
  }
  if (h.magic != secret) return drop("wrong magic (not a member of this job)");
  if (h.rank < 0 || h.rank >= nRanks_) return drop(concat("it claims rank ", h.rank, ", outside 0..", nRanks_ - 1));
  ConnKind kind;
  switch (h.kind) {
    case static_cast<uint32_t>(ConnKind::Data):
      kind = ConnKind::Data;
      break;
    case static_cast<uint32_t>(ConnKind::Ring):
      kind = ConnKind::Ring;
      break;
    case static_cast<uint32_t>(ConnKind::Liveness):
      kind = ConnKind::Liveness;
      break;
    default:
      return drop(concat("unexpected connection kind ", h.kind, " (", kindName(h.kind), ")"));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_tuple(kind, static_cast<int>(h.rank), static_cast<int>(h.tag));
  if (incoming_.count(key) || claimed_.count(key)) {
    return drop(concat("a second ", kindName(h.kind), " connection from rank ", h.rank, " for tag ", h.tag));
  }
  // Liveness streams are watched here; they are also announced so that initialize can wait for its
  // predecessor's, and so never ends while one is still unknown (it would be closed without a goodbye).
  if (kind == ConnKind::Liveness) {
    liveness.emplace_back(socket, h.rank);
    livenessSockets_.push_back(socket);
  }
  incoming_[key] = socket;
  sockets_.push_back(socket);
  cv_.notify_all();
}

void TcpBootstrap::Impl::serviceLoop() {
  HandshakeAcceptor::Options options;
  options.maxPending = kMaxPendingConnections;
  options.helloTimeout = kHandshakeTimeout;
  options.what = "handshake";
  options.firstRead = sizeof(uint64_t);
  options.judge = [this](const std::vector<char>& bytes) {
    if (bytes.size() == sizeof(uint64_t)) {
      uint64_t magic;
      std::memcpy(&magic, bytes.data(), sizeof(magic));
      const uint64_t secret = secret_.load();
      if (secret != 0 && magic != secret) {
        return HandshakeAcceptor::Verdict::reject("wrong magic (not a member of this job)");
      }
      return HandshakeAcceptor::Verdict::needMore(kHandshakeBytes);
    }
    return HandshakeAcceptor::Verdict::accept();
  };
  options.onDrop = dropReporter(concat("its listener ", toString(listener_.address())));
  HandshakeAcceptor acceptor(listener_.fd(), std::move(options));
  std::vector<std::pair<std::shared_ptr<TcpSocket>, Handshake>> held;  // handshakes before the secret
  std::vector<std::pair<std::shared_ptr<TcpSocket>, int>> liveness;    // socket, peer rank
  while (!stopping_.load()) {
    bool aborted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& l : newLiveness_) liveness.push_back(l);
      newLiveness_.clear();
      aborted = aborted_;
    }
    if (aborted) {
      // Nothing more to accept or watch; wait only to be told to stop.
      acceptor.clear("the bootstrap was aborted");
      held.clear();
      liveness.clear();
    }
    if (!held.empty() && secret_.load() != 0) {
      auto waiting = std::move(held);
      held.clear();
      for (auto& [socket, h] : waiting) admit(std::move(socket), h, liveness, held);
    }
    std::vector<pollfd> fds;
    fds.push_back({wakeFd_.get(), POLLIN, 0});
    const size_t acceptorBase = fds.size();
    if (!aborted) {
      fds.resize(acceptorBase + acceptor.pollCount());
      acceptor.fillPollFds(fds.data() + acceptorBase);
    }
    const size_t livenessBase = fds.size();
    for (auto& l : liveness) fds.push_back({l.first->fd(), POLLIN, 0});
    int rc = ::poll(fds.data(), fds.size(), aborted ? -1 : acceptor.nextExpiry().pollTimeoutMs());
    if (rc < 0) {
      if (errno == EINTR) continue;
      LOG_ERROR(NET, "rank ", rank_, ": bootstrap service poll() failed: ", errnoName(errno));
      abort(concat("the bootstrap service of rank ", rank_, " failed: poll(): ", errnoName(errno)));
      continue;
    }
    if (fds[0].revents) {
      uint64_t count;
      while (::read(wakeFd_.get(), &count, sizeof(count)) > 0) {
      }
    }
    if (stopping_.load() || aborted) continue;

    // Liveness: a goodbye is a clean exit; anything else (an abort notice, EOF, a reset) is a failure.
    std::vector<std::pair<std::shared_ptr<TcpSocket>, int>> stillWatched;
    std::string failure, cause;
    for (size_t i = 0; i < liveness.size(); ++i) {
      auto& [socket, peer] = liveness[i];
      if (!fds[livenessBase + i].revents) {
        stillWatched.push_back(liveness[i]);
        continue;
      }
      char byte = 0;
      try {
        if (socket->tryRecv(&byte, 1) == 0) {
          stillWatched.push_back(liveness[i]);
          continue;
        }
        if (byte == kGoodbye) {
          std::lock_guard<std::mutex> lock(mutex_);
          departed_[peer] = true;
          LOG_DEBUG(NET, "rank ", rank_, ": rank ", peer, " destroyed its bootstrap");
          continue;
        }
        // The rest of the notice follows at once; a short bound keeps a broken peer from stalling us.
        try {
          const Deadline noticeDeadline = Deadline::after(std::chrono::seconds(2));
          uint32_t length = 0;
          socket->recvAll(&length, sizeof(length), noticeDeadline);
          if (length > kMaxCauseText) throw std::length_error("oversized abort notice");
          cause.assign(length, '\0');
          socket->recvAll(cause.data(), length, noticeDeadline);
        } catch (const std::exception&) {
          cause = concat("rank ", peer, " aborted without saying why");
        }
        failure = concat("rank ", peer, " aborted its bootstrap after: ", cause);
      } catch (const std::exception&) {
        failure = concat("lost rank ", peer, " (", toString(socket->peer()),
                         "): its connection closed without a goodbye (the process exited, crashed or was killed)");
      }
      break;
    }
    if (!failure.empty()) {
      abort(concat("rank ", rank_, ": ", failure), cause);
      continue;
    }
    liveness = std::move(stillWatched);

    try {
      for (auto& accepted : acceptor.process(fds.data() + acceptorBase)) {
        auto socket = std::make_shared<TcpSocket>(std::move(accepted.fd), accepted.peer);
        admit(std::move(socket), decodeHandshake(accepted.hello.data()), liveness, held);
      }
    } catch (const std::exception& e) {
      abort(concat("rank ", rank_, ": accepting on ", toString(listener_.address()), " failed: ", plainMessage(e)));
    }
  }
}

TcpBootstrap::Impl::~Impl() {
  std::vector<std::shared_ptr<TcpSocket>> liveness;
  bool aborted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    liveness = livenessSockets_;
    aborted = aborted_;
  }
  if (!aborted) {
    for (auto& s : liveness) {
      try {
        s->trySend(&kGoodbye, 1);
      } catch (const std::exception&) {
        // The neighbour left first; nothing to tell it.
      }
    }
  }
  stopService();
  // Unread bytes at close make the kernel reset the connection, which could overtake our goodbye.
  for (auto& s : liveness) {
    char sink[64];
    try {
      while (s->tryRecv(sink, sizeof(sink)) > 0) {
      }
    } catch (const std::exception&) {
    }
  }
}

}  // namespace mscclpp
