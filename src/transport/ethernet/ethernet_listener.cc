// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/ethernet_listener.hpp"

#include <cstring>
#include <mscclpp/env.hpp>

#include "common/checks.hpp"

namespace mscclpp {
namespace {

// Waiters poll in slices of this length, checking for cancellation and their deadline in between.
constexpr std::chrono::milliseconds kAcceptSlice(100);

}  // namespace

EthernetListener::EthernetListener(TcpListener listener) : listener_(std::move(listener)) {
  HandshakeAcceptor::Options options;
  options.maxPending = kMaxPendingHellos;
  options.helloTimeout = kHelloTimeout;
  options.firstRead = sizeof(uint64_t);
  options.judge = [](const std::vector<char>& bytes) {
    if (bytes.size() == sizeof(uint64_t)) {
      uint64_t magic;
      std::memcpy(&magic, bytes.data(), sizeof(magic));
      if (magic != kEthernetMagic) return HandshakeAcceptor::Verdict::reject("wrong magic number");
      return HandshakeAcceptor::Verdict::needMore(sizeof(EthernetHello));
    }
    return HandshakeAcceptor::Verdict::accept();
  };
  options.onDrop = [where = toString(listener_.address())](const std::string& from, const std::string& why) {
    LOG_WARN(CONN, "Ethernet endpoint ", where, ": dropped a connection from ", from, ": ", why);
  };
  acceptor_ = HandshakeAcceptor(listener_.fd(), std::move(options));
}

void EthernetListener::keep(HandshakeAcceptor::Accepted accepted) {
  EthernetHello hello;
  std::memcpy(&hello, accepted.hello.data(), sizeof(hello));
  TcpSocket socket(std::move(accepted.fd), accepted.peer);
  const std::string from = toString(accepted.peer);
  if (unclaimed_.count(hello.nonce)) {
    LOG_WARN(CONN, "Ethernet endpoint ", toString(listener_.address()), ": dropped a connection from ", from,
             ": a connection with its endpoint's nonce is already waiting");
    return;
  }
  if (unclaimed_.size() >= kMaxUnclaimed) {
    LOG_WARN(CONN, "Ethernet endpoint ", toString(listener_.address()), ": dropped a connection from ", from, ": ",
             kMaxUnclaimed, " connections already wait for their connect()");
    return;
  }
  // A peer connects before this side's connect() at most by the connect deadline.
  unclaimed_.emplace(hello.nonce, Unclaimed{std::move(socket), Deadline::fromTimeoutSec(env()->bootstrapTimeoutSec)});
}

void EthernetListener::expireUnclaimed() {
  for (auto it = unclaimed_.begin(); it != unclaimed_.end();) {
    if (it->second.expiry.expired()) {
      LOG_WARN(CONN, "Ethernet endpoint ", toString(listener_.address()), ": dropped a connection from ",
               toString(it->second.socket.peer()), ": no connect() claimed it in time");
      it = unclaimed_.erase(it);
    } else {
      ++it;
    }
  }
}

TcpSocket EthernetListener::acceptFrom(uint64_t peerNonce, const Deadline& deadline, const std::atomic<bool>& cancel) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (cancel) MSCCLPP_THROW(Aborted, "Ethernet endpoint ", toString(listener_.address()), ": connect cancelled");
    expireUnclaimed();
    auto it = unclaimed_.find(peerNonce);
    if (it != unclaimed_.end()) {
      TcpSocket socket = std::move(it->second.socket);
      unclaimed_.erase(it);
      return socket;
    }
    if (deadline.expired()) {
      MSCCLPP_THROW(Timeout, "Ethernet endpoint ", toString(listener_.address()), ": the peer did not connect in time");
    }
    const auto slice = std::min(kAcceptSlice, deadline.remaining());
    if (polling_) {
      // Another waiter polls for everyone; it hands over what it accepts and wakes us.
      cv_.wait_for(lock, slice);
      continue;
    }
    polling_ = true;
    lock.unlock();
    std::vector<HandshakeAcceptor::Accepted> accepted;
    std::exception_ptr error;
    try {
      accepted = acceptor_.step(slice);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    polling_ = false;
    for (auto& a : accepted) keep(std::move(a));
    cv_.notify_all();
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace mscclpp
