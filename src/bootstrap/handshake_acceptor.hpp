// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Accepting connections that must say who they are before they are handed on: the bootstrap's root
// and rank listeners, the Ethernet endpoint's listener and the fd service all accept on a listening
// socket, read a short hello from each new connection and judge it. Anyone may connect to those
// sockets, so the acceptor bounds what a stranger can hold: at most `maxPending` connections are
// waiting for their hello, each for at most `helloTimeout`, and the hellos are read together from
// one poll() (a client that connects and says nothing delays nobody else).

#ifndef MSCCLPP_BOOTSTRAP_HANDSHAKE_ACCEPTOR_HPP_
#define MSCCLPP_BOOTSTRAP_HANDSHAKE_ACCEPTOR_HPP_

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bootstrap/socket.hpp"
#include "common/unique_fd.hpp"

namespace mscclpp {

class HandshakeAcceptor {
 public:
  /// What the judge makes of the bytes a connection has sent so far.
  struct Verdict {
    enum Kind { NeedMore, Accept, Reject };
    Kind kind;
    size_t need;      // NeedMore: the total number of bytes needed before judging again
    std::string why;  // Reject: the reason, for the drop report
    static Verdict needMore(size_t total) { return {NeedMore, total, {}}; }
    static Verdict accept() { return {Accept, 0, {}}; }
    static Verdict reject(std::string why) { return {Reject, 0, std::move(why)}; }
  };

  /// A connection whose hello the judge accepted: the descriptor (non-blocking), the peer's address
  /// (empty for a unix socket) and every byte read from it.
  struct Accepted {
    UniqueFd fd;
    SocketAddress peer;
    std::vector<char> hello;
  };

  struct Options {
    /// Connections waiting for their hello at once; a new one beyond this is closed at accept, after
    /// connections that have closed meanwhile have been reaped.
    size_t maxPending = 256;
    std::chrono::milliseconds helloTimeout{5000};
    /// Bytes to read before the judge is first asked.
    size_t firstRead = 8;
    /// What the first bytes are called in drop reports ("hello", "handshake", "check-in").
    std::string what = "hello";
    /// Judges the bytes received so far (at least `firstRead`, or the total it last asked for).
    std::function<Verdict(const std::vector<char>& bytes)> judge;
    /// Called on each accepted descriptor before anything is read; a non-empty result drops it with
    /// that reason (the fd service refuses other users here). Optional.
    std::function<std::string(int fd)> screen;
    /// Reports a dropped connection: who (address text, or "a local client") and why.
    std::function<void(const std::string& from, const std::string& why)> onDrop;
  };

  HandshakeAcceptor() = default;
  /// Accepts on `listenFd` (not owned; it must outlive the acceptor's use and be non-blocking).
  HandshakeAcceptor(int listenFd, Options options);
  HandshakeAcceptor(HandshakeAcceptor&&) = default;
  HandshakeAcceptor& operator=(HandshakeAcceptor&&) = default;

  /// The descriptors to poll: the listener, then each pending connection (POLLIN).
  size_t pollCount() const { return 1 + pending_.size(); }
  void fillPollFds(pollfd* out) const;
  /// When the earliest pending hello expires (never when none is pending).
  Deadline nextExpiry() const;

  /// After a poll over the descriptors of fillPollFds (`fds` points at the first): reads what the
  /// pending connections sent and judges it, drops those that closed, failed the judge or ran out of
  /// time, then accepts new connections. Returns the connections accepted by the judge. Throws
  /// SysError if accepting fails for a reason other than the clients' own.
  std::vector<Accepted> process(const pollfd* fds);
  /// The same without a poll of the caller's: polls for at most `wait` first.
  std::vector<Accepted> step(std::chrono::milliseconds wait);

  /// Takes back a connection that was handed out, to wait for its next hello (a client of the fd
  /// service asking again on one connection); it counts as pending, with a fresh deadline. Such a
  /// client has finished a conversation already: closing before the first byte of another hello is
  /// how it says goodbye, so that closes it without a drop report. Anything else it does (a partial or
  /// rejected hello, an error, silence past the deadline) is reported like a new connection's.
  void adopt(UniqueFd fd, const SocketAddress& peer);

  size_t pendingCount() const { return pending_.size(); }
  /// Drops every pending connection with `why`.
  void clear(const std::string& why);

 private:
  struct Pending {
    UniqueFd fd;
    SocketAddress peer;
    std::vector<char> bytes;
    size_t need;
    std::chrono::steady_clock::time_point deadline;
    bool adopted;  // taken back by adopt(): its earlier hello was complete
  };
  /// Whether `p`, which has closed, ended normally: an adopted connection between two hellos.
  static bool closedBetweenHellos(const Pending& p) { return p.adopted && p.bytes.empty(); }
  /// Reads what `p` has sent; returns false (after reporting) if it was dropped.
  bool readFrom(Pending& p, std::vector<Accepted>& accepted);
  /// Drops pending connections that have closed without a complete hello.
  void reapClosed();
  void acceptNew();
  void drop(const Pending& p, const std::string& why) const;

  int listenFd_ = -1;
  Options options_;
  std::vector<Pending> pending_;
};

/// "1.2.3.4:5", or "a local client" for an address without an IP family (a unix socket).
std::string describeAcceptedPeer(const SocketAddress& peer);

}  // namespace mscclpp

#endif  // MSCCLPP_BOOTSTRAP_HANDSHAKE_ACCEPTOR_HPP_
