// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// TCP sockets for the control plane (the bootstrap) and for socket-based transports: addresses and
// their text forms, the choice of the local interface, and blocking-with-deadline stream sockets.
// Every wait takes a Deadline, so no call in this layer can block forever unless asked to
// (Deadline::never()). Sockets are non-blocking underneath; waiting is done with poll().

#ifndef MSCCLPP_BOOTSTRAP_SOCKET_HPP_
#define MSCCLPP_BOOTSTRAP_SOCKET_HPP_

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/unique_fd.hpp"

namespace mscclpp {

/// A point in time after which a blocking operation gives up, or "never". Cheap to copy.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline after(std::chrono::milliseconds duration);
  static Deadline never();
  /// A negative value means never; otherwise `sec` seconds from now.
  static Deadline fromTimeoutSec(int64_t sec);

  bool isNever() const { return never_; }
  bool expired() const;
  /// For poll(): -1 when never, else the remaining milliseconds rounded up, clamped to >= 0.
  int pollTimeoutMs() const;
  /// Remaining time, clamped to >= 0 (a very large value when never).
  std::chrono::milliseconds remaining() const;
  /// The earlier of the two.
  Deadline min(const Deadline& other) const;
  Clock::time_point at() const { return at_; }

 private:
  Deadline(bool never, Clock::time_point at) : never_(never), at_(at) {}
  bool never_;
  Clock::time_point at_;
};

/// An IPv4 or IPv6 socket address. Crosses process boundaries raw (28 bytes): the UniqueId, the
/// bootstrap's address exchange and transport endpoints carry it as is.
union SocketAddress {
  sockaddr sa;
  sockaddr_in sin;
  sockaddr_in6 sin6;
};
static_assert(sizeof(SocketAddress) == 28, "SocketAddress is part of wire formats");

/// An all-zero address (family AF_UNSPEC).
SocketAddress emptySocketAddress();
/// The byte length to pass to bind/connect for this address's family (0 if unset).
socklen_t socketAddressLength(const SocketAddress& address);
uint16_t socketAddressPort(const SocketAddress& address);
SocketAddress withPort(const SocketAddress& address, uint16_t port);
/// Same family, IP and port.
bool operator==(const SocketAddress& a, const SocketAddress& b);
inline bool operator!=(const SocketAddress& a, const SocketAddress& b) { return !(a == b); }

/// "1.2.3.4:5" or "[::1]:5"; "<unset>" for an empty address.
std::string toString(const SocketAddress& address);

/// Parses "ip:port", "[ipv6]:port", "hostname:port" or "ifname:ip:port" (the interface name, if any,
/// goes to `ifname`). Throws Error(InvalidUsage) naming the string and what is wrong with it.
SocketAddress parseSocketAddress(const std::string& text, std::string* ifname);
SocketAddress parseSocketAddress(const std::string& text);

/// A local network interface address, as getifaddrs reports it.
struct NetInterface {
  std::string name;
  SocketAddress address;  // port 0
  SocketAddress netmask;
};

/// The rules that choose the interface; the fields hold the raw values of the environment variables.
struct InterfaceRules {
  std::string ifname;  // MSCCLPP_SOCKET_IFNAME: "eth,ib" prefixes; "^" excludes; "=" matches exactly
  std::string family;  // MSCCLPP_SOCKET_FAMILY: "", "AF_INET" or "AF_INET6"
  std::string commId;  // MSCCLPP_COMM_ID: "ip:port" whose subnet picks the interface
};

/// The up interfaces of this host that have an IPv4 or IPv6 address (IPv6 link-local excluded).
std::vector<NetInterface> listNetInterfaces();

/// Applies the rules to `candidates`: MSCCLPP_SOCKET_IFNAME if set (only what it matches), else ib*,
/// else the interface whose subnet holds MSCCLPP_COMM_ID's address, else anything but docker* and lo,
/// then docker*, then lo. Without a forced family, IPv4 is preferred. `why` (if given) receives the
/// rule that decided. Throws Error(InvalidUsage) if nothing qualifies or a rule is malformed.
NetInterface chooseNetInterface(const InterfaceRules& rules, const std::vector<NetInterface>& candidates,
                                std::string* why = nullptr);

/// The address (port 0) of the interface chosen by the environment's rules for this host; computed
/// once per process and logged at INFO (NET).
SocketAddress localInterfaceAddress();

/// The address (port 0) of the interface called exactly `name` (MSCCLPP_SOCKET_FAMILY applies).
SocketAddress interfaceAddress(const std::string& name);

/// A connected TCP stream. Move-only; closes its descriptor on destruction.
/// Thread-safety: one thread may send while another receives; shutdown() may be called from any thread
/// at any time to make blocked and later calls fail with Error(Aborted).
class TcpSocket {
 public:
  TcpSocket() = default;
  /// Takes a connected, non-blocking socket.
  TcpSocket(UniqueFd fd, const SocketAddress& peer);
  TcpSocket(TcpSocket&& other) noexcept;
  TcpSocket& operator=(TcpSocket&& other) noexcept;
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;
  ~TcpSocket() = default;

  /// Connects to `to`, retrying refused and timed-out attempts until the deadline, then throws
  /// Error(Timeout) naming `what` and the address. Other failures throw SysError at once.
  static TcpSocket connect(const SocketAddress& to, const Deadline& deadline, const std::string& what);

  /// Sends every byte. Throws Error(Aborted) "peer <addr> closed the connection" if the peer is gone,
  /// Error(Timeout) at the deadline. Never raises SIGPIPE.
  void sendAll(const void* data, size_t size, const Deadline& deadline);
  /// Sends every byte, failing with Error(Timeout) only when `stall` passes without the kernel taking
  /// a single byte (a peer that stopped reading); negative: no limit. Otherwise as sendAll.
  void sendAllMakingProgress(const void* data, size_t size, std::chrono::milliseconds stall);
  /// Receives exactly `size` bytes, with the same errors as sendAll.
  void recvAll(void* data, size_t size, const Deadline& deadline);
  /// Waits for data, then returns 1..max bytes. Same errors as recvAll.
  size_t recvSome(void* data, size_t max, const Deadline& deadline);

  /// Non-blocking forms: the bytes moved (possibly 0 if the call would block). EOF and errors throw
  /// as above.
  size_t trySend(const void* data, size_t size);
  size_t tryRecv(void* data, size_t max);

  void setNoDelay();
  /// Shuts both directions down; idempotent; safe from another thread to wake a blocked call.
  void shutdown();
  bool isShutdown() const { return shutdown_.load(std::memory_order_acquire); }

  int fd() const { return fd_.get(); }
  SocketAddress peer() const { return peer_; }
  bool valid() const { return fd_.valid(); }

 private:
  /// Waits for `events` on the socket; throws Timeout at the deadline and Aborted after shutdown().
  void waitFor(short events, const Deadline& deadline, const char* op);
  [[noreturn]] void throwClosed(const char* op) const;

  UniqueFd fd_;
  SocketAddress peer_{};
  std::atomic<bool> shutdown_{false};
};

/// A listening TCP socket. Move-only.
class TcpListener {
 public:
  TcpListener() = default;
  TcpListener(TcpListener&& other) noexcept;
  TcpListener& operator=(TcpListener&& other) noexcept;
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  ~TcpListener() = default;

  /// Binds `bindTo` (port 0: an ephemeral port) and listens.
  static TcpListener listen(const SocketAddress& bindTo, int backlog = 128);
  /// Binds without listening: reserves the port, yet another socket with SO_REUSEADDR (in this
  /// process or another) may still bind the same address and listen. startListening() completes it.
  static TcpListener bindOnly(const SocketAddress& bindTo);
  void startListening(int backlog = 128);
  bool listening() const { return listening_; }

  /// The bound address, with the actual port.
  SocketAddress address() const { return address_; }
  /// Waits for a connection until the deadline (Error(Timeout)); Error(Aborted) after shutdown().
  /// The accepted socket is non-blocking.
  TcpSocket accept(const Deadline& deadline);
  /// Accepts one pending connection without waiting; false if there is none.
  bool tryAccept(TcpSocket* out);

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  /// Wakes a blocked accept() from another thread; idempotent.
  void shutdown();

 private:
  UniqueFd fd_;
  SocketAddress address_{};
  bool listening_ = false;
  std::atomic<bool> shutdown_{false};
};

}  // namespace mscclpp

#endif  // MSCCLPP_BOOTSTRAP_SOCKET_HPP_
