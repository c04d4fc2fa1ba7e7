// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "bootstrap/socket.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mscclpp/env.hpp>
#include <optional>
#include <thread>

#include "common/checks.hpp"
#include "common/strings.hpp"

namespace mscclpp {

// ---- Deadline ----

Deadline Deadline::after(std::chrono::milliseconds duration) {
  return Deadline(false, Clock::now() + std::max(duration, std::chrono::milliseconds(0)));
}

Deadline Deadline::never() { return Deadline(true, Clock::time_point::max()); }

Deadline Deadline::fromTimeoutSec(int64_t sec) {
  // Beyond a century the arithmetic on time_point could overflow; such a limit means "never" anyway.
  constexpr int64_t kNeverAbove = int64_t(100) * 365 * 24 * 3600;
  if (sec < 0 || sec > kNeverAbove) return never();
  return after(std::chrono::seconds(sec));
}

bool Deadline::expired() const { return !never_ && Clock::now() >= at_; }

std::chrono::milliseconds Deadline::remaining() const {
  if (never_) return std::chrono::milliseconds(std::numeric_limits<int64_t>::max() / 2);
  auto left = at_ - Clock::now();
  if (left <= Clock::duration::zero()) return std::chrono::milliseconds(0);
  return std::chrono::ceil<std::chrono::milliseconds>(left);
}

int Deadline::pollTimeoutMs() const {
  if (never_) return -1;
  return static_cast<int>(std::min<int64_t>(remaining().count(), INT_MAX));
}

Deadline Deadline::min(const Deadline& other) const {
  if (never_) return other;
  if (other.never_) return *this;
  return at_ <= other.at_ ? *this : other;
}

// ---- SocketAddress ----

SocketAddress emptySocketAddress() {
  SocketAddress address;
  std::memset(&address, 0, sizeof(address));
  return address;
}

socklen_t socketAddressLength(const SocketAddress& address) {
  switch (address.sa.sa_family) {
    case AF_INET:
      return sizeof(sockaddr_in);
    case AF_INET6:
      return sizeof(sockaddr_in6);
    default:
      return 0;
  }
}

uint16_t socketAddressPort(const SocketAddress& address) {
  if (address.sa.sa_family == AF_INET) return ntohs(address.sin.sin_port);
  if (address.sa.sa_family == AF_INET6) return ntohs(address.sin6.sin6_port);
  return 0;
}

SocketAddress withPort(const SocketAddress& address, uint16_t port) {
  SocketAddress out = address;
  if (out.sa.sa_family == AF_INET) out.sin.sin_port = htons(port);
  if (out.sa.sa_family == AF_INET6) out.sin6.sin6_port = htons(port);
  return out;
}

bool operator==(const SocketAddress& a, const SocketAddress& b) {
  if (a.sa.sa_family != b.sa.sa_family) return false;
  if (a.sa.sa_family == AF_INET) {
    return a.sin.sin_port == b.sin.sin_port && a.sin.sin_addr.s_addr == b.sin.sin_addr.s_addr;
  }
  if (a.sa.sa_family == AF_INET6) {
    return a.sin6.sin6_port == b.sin6.sin6_port &&
           std::memcmp(&a.sin6.sin6_addr, &b.sin6.sin6_addr, sizeof(in6_addr)) == 0;
  }
  return true;
}

namespace {

std::string ipString(const SocketAddress& address) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (address.sa.sa_family == AF_INET) {
    inet_ntop(AF_INET, &address.sin.sin_addr, buf, sizeof(buf));
    return buf;
  }
  if (address.sa.sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &address.sin6.sin6_addr, buf, sizeof(buf));
    return buf;
  }
  return "<unset>";
}

int parseFamily(const std::string& value) {
  std::string upper = toUpper(value);
  if (upper.empty()) return AF_UNSPEC;
  if (upper == "AF_INET") return AF_INET;
  if (upper == "AF_INET6") return AF_INET6;
  MSCCLPP_THROW(InvalidUsage, "MSCCLPP_SOCKET_FAMILY='", value, "' is neither AF_INET nor AF_INET6");
}

const char* familyName(int family) {
  return family == AF_INET ? "AF_INET" : family == AF_INET6 ? "AF_INET6" : "any family";
}

uint16_t parsePort(const std::string& port, const std::string& text) {
  MSCCLPP_CHECK_USAGE(!port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), ::isdigit),
                      "invalid socket address '", text, "': port '", port, "' is not a number in 0..65535");
  unsigned long value = std::stoul(port);
  MSCCLPP_CHECK_USAGE(value <= 65535, "invalid socket address '", text, "': port ", value, " is above 65535");
  return static_cast<uint16_t>(value);
}

// Numeric addresses first; names are resolved, preferring the forced family, else IPv4.
SocketAddress resolveHost(const std::string& host, uint16_t port, const std::string& text) {
  MSCCLPP_CHECK_USAGE(!host.empty(), "invalid socket address '", text, "': the host is empty");
  int family = AF_UNSPEC;
  try {
    family = parseFamily(env()->socketFamily);
  } catch (const Error&) {
    family = AF_UNSPEC;  // a bad value is reported where the interface is chosen
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  hints.ai_flags = AI_NUMERICHOST;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0) {
    hints.ai_flags = 0;
    hints.ai_family = family;
    rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  }
  MSCCLPP_CHECK_USAGE(rc == 0, "invalid socket address '", text, "': cannot resolve '", host, "': ", gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(result, freeaddrinfo);
  const addrinfo* chosen = nullptr;
  for (const addrinfo* ai = result; ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    if (!chosen || (chosen->ai_family != AF_INET && ai->ai_family == AF_INET && family == AF_UNSPEC)) chosen = ai;
  }
  MSCCLPP_CHECK_USAGE(chosen, "invalid socket address '", text, "': '", host, "' has no IPv4 or IPv6 address");
  SocketAddress address = emptySocketAddress();
  std::memcpy(&address, chosen->ai_addr, std::min<size_t>(chosen->ai_addrlen, sizeof(address)));
  return withPort(address, port);
}

bool isIpv6Literal(const std::string& host) {
  in6_addr tmp;
  return inet_pton(AF_INET6, host.c_str(), &tmp) == 1;
}

}  // namespace

std::string toString(const SocketAddress& address) {
  switch (address.sa.sa_family) {
    case AF_INET:
      return ipString(address) + ":" + std::to_string(socketAddressPort(address));
    case AF_INET6:
      return "[" + ipString(address) + "]:" + std::to_string(socketAddressPort(address));
    default:
      return "<unset>";
  }
}

SocketAddress parseSocketAddress(const std::string& text, std::string* ifname) {
  if (ifname) ifname->clear();
  MSCCLPP_CHECK_USAGE(!text.empty(),
                      "invalid socket address '': expected ip:port, [ipv6]:port, host:port or ifname:ip:port");
  if (text.front() == '[') {
    size_t close = text.find(']');
    MSCCLPP_CHECK_USAGE(close != std::string::npos, "invalid socket address '", text, "': missing ']'");
    MSCCLPP_CHECK_USAGE(close + 1 < text.size() && text[close + 1] == ':', "invalid socket address '", text,
                        "': expected ':port' after ']'");
    std::string host = text.substr(1, close - 1);
    MSCCLPP_CHECK_USAGE(isIpv6Literal(host), "invalid socket address '", text, "': '", host,
                        "' is not an IPv6 address");
    return resolveHost(host, parsePort(text.substr(close + 2), text), text);
  }
  size_t lastColon = text.rfind(':');
  MSCCLPP_CHECK_USAGE(lastColon != std::string::npos, "invalid socket address '", text, "': missing ':port'");
  std::string host = text.substr(0, lastColon);
  std::string port = text.substr(lastColon + 1);
  if (host.find(':') != std::string::npos && !isIpv6Literal(host)) {
    // "ifname:ip:port": the interface name cannot contain ':' itself.
    size_t firstColon = text.find(':');
    std::string name = text.substr(0, firstColon);
    MSCCLPP_CHECK_USAGE(!name.empty() && name.find('[') == std::string::npos, "invalid socket address '", text,
                        "': expected ifname:ip:port");
    std::string rest = text.substr(firstColon + 1);
    MSCCLPP_CHECK_USAGE(!rest.empty() && rest.find(':') != std::string::npos, "invalid socket address '", text,
                        "': expected ifname:ip:port");
    SocketAddress address;
    try {
      address = parseSocketAddress(rest, nullptr);
    } catch (const Error& e) {
      MSCCLPP_THROW(InvalidUsage, "invalid socket address '", text, "': after interface '", name, "': ", e.what());
    }
    if (ifname) *ifname = name;
    return address;
  }
  return resolveHost(host, parsePort(port, text), text);
}

SocketAddress parseSocketAddress(const std::string& text) { return parseSocketAddress(text, nullptr); }

// ---- interfaces ----

std::vector<NetInterface> listNetInterfaces() {
  ifaddrs* list = nullptr;
  MSCCLPP_SYSCHECK(getifaddrs(&list));
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> guard(list, freeifaddrs);
  std::vector<NetInterface> out;
  for (const ifaddrs* ifa = list; ifa; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP)) continue;
    int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    NetInterface itf;
    itf.name = ifa->ifa_name;
    itf.address = emptySocketAddress();
    itf.netmask = emptySocketAddress();
    size_t len = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&itf.address, ifa->ifa_addr, len);
    if (ifa->ifa_netmask) std::memcpy(&itf.netmask, ifa->ifa_netmask, len);
    itf.netmask.sa.sa_family = static_cast<sa_family_t>(family);
    // Link-local IPv6 needs a scope id that peers on other hosts cannot use.
    if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&itf.address.sin6.sin6_addr)) continue;
    itf.address = withPort(itf.address, 0);
    out.push_back(itf);
  }
  return out;
}

namespace {

bool inSubnet(const NetInterface& itf, const SocketAddress& target) {
  if (itf.address.sa.sa_family != target.sa.sa_family) return false;
  const uint8_t *a, *m, *t;
  size_t n;
  if (target.sa.sa_family == AF_INET) {
    a = reinterpret_cast<const uint8_t*>(&itf.address.sin.sin_addr);
    m = reinterpret_cast<const uint8_t*>(&itf.netmask.sin.sin_addr);
    t = reinterpret_cast<const uint8_t*>(&target.sin.sin_addr);
    n = 4;
  } else {
    a = reinterpret_cast<const uint8_t*>(&itf.address.sin6.sin6_addr);
    m = reinterpret_cast<const uint8_t*>(&itf.netmask.sin6.sin6_addr);
    t = reinterpret_cast<const uint8_t*>(&target.sin6.sin6_addr);
    n = 16;
  }
  for (size_t i = 0; i < n; ++i) {
    if ((a[i] & m[i]) != (t[i] & m[i])) return false;
  }
  return true;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// MSCCLPP_SOCKET_IFNAME: a comma list of name prefixes; a leading '^' keeps everything the list does
// not match, a leading '=' (after any '^') compares whole names.
std::function<bool(const std::string&)> ifnameMatcher(const std::string& spec) {
  std::string rest = spec;
  bool exclude = false, exact = false;
  if (!rest.empty() && rest[0] == '^') {
    exclude = true;
    rest.erase(0, 1);
  }
  if (!rest.empty() && rest[0] == '=') {
    exact = true;
    rest.erase(0, 1);
  }
  std::vector<std::string> names = splitList(rest);
  MSCCLPP_CHECK_USAGE(!names.empty(), "MSCCLPP_SOCKET_IFNAME='", spec, "' names no interface");
  return [names, exclude, exact](const std::string& name) {
    bool listed = std::any_of(names.begin(), names.end(),
                              [&](const std::string& n) { return exact ? name == n : startsWith(name, n); });
    return listed != exclude;
  };
}

std::string describe(const std::vector<NetInterface>& list) {
  if (list.empty()) return "none";
  std::string out;
  for (const auto& itf : list) {
    if (!out.empty()) out += ", ";
    out += itf.name + " " + ipString(itf.address);
  }
  return out;
}

}  // namespace

NetInterface chooseNetInterface(const InterfaceRules& rules, const std::vector<NetInterface>& candidates,
                                std::string* why) {
  const int family = parseFamily(rules.family);
  std::vector<NetInterface> usable;
  for (const auto& itf : candidates) {
    if (family == AF_UNSPEC || itf.address.sa.sa_family == family) usable.push_back(itf);
  }
  // The first usable interface the predicate accepts; IPv4 before IPv6 unless the family is forced.
  auto pick = [&](const std::function<bool(const NetInterface&)>& accept) -> std::optional<NetInterface> {
    for (int pass : {AF_INET, AF_INET6}) {
      for (const auto& itf : usable) {
        if (itf.address.sa.sa_family == pass && accept(itf)) return itf;
      }
    }
    return std::nullopt;
  };
  auto decided = [&](const NetInterface& itf, const std::string& rule) {
    if (why) *why = rule;
    return itf;
  };

  if (!rules.ifname.empty()) {
    auto matches = ifnameMatcher(rules.ifname);
    if (auto itf = pick([&](const NetInterface& i) { return matches(i.name); })) {
      return decided(*itf, "MSCCLPP_SOCKET_IFNAME=" + rules.ifname);
    }
    MSCCLPP_THROW(InvalidUsage, "MSCCLPP_SOCKET_IFNAME='", rules.ifname, "' matches no up interface with an ",
                  familyName(family), " address; this host has: ", describe(candidates));
  }
  if (auto itf = pick([](const NetInterface& i) { return startsWith(i.name, "ib"); })) {
    return decided(*itf, "first ib* interface");
  }
  if (!rules.commId.empty()) {
    SocketAddress target;
    try {
      target = parseSocketAddress(rules.commId);
    } catch (const Error& e) {
      MSCCLPP_THROW(InvalidUsage, "MSCCLPP_COMM_ID='", rules.commId, "' is not an address: ", e.what());
    }
    if (auto itf = pick([&](const NetInterface& i) { return inSubnet(i, target); })) {
      return decided(*itf, "subnet of MSCCLPP_COMM_ID=" + rules.commId);
    }
  }
  if (auto itf =
          pick([](const NetInterface& i) { return !startsWith(i.name, "docker") && !startsWith(i.name, "lo"); })) {
    return decided(*itf, "first interface other than docker* and lo");
  }
  if (auto itf = pick([](const NetInterface& i) { return startsWith(i.name, "docker"); })) {
    return decided(*itf, "docker* (no other interface)");
  }
  if (auto itf = pick([](const NetInterface& i) { return startsWith(i.name, "lo"); })) {
    return decided(*itf, "loopback (no other interface)");
  }
  MSCCLPP_THROW(InvalidUsage, "no usable network interface with an ", familyName(family),
                " address; this host has: ", describe(candidates));
}

SocketAddress localInterfaceAddress() {
  // Computed once: every socket of the process then agrees on the interface. If choosing throws, the
  // next call tries again.
  static const SocketAddress cached = [] {
    auto e = env();
    InterfaceRules rules{e->socketIfname, e->socketFamily, e->commId};
    std::string why;
    NetInterface itf = chooseNetInterface(rules, listNetInterfaces(), &why);
    LOG_INFO(NET, "using interface ", itf.name, " ", ipString(itf.address), " (", why, ")");
    return itf.address;
  }();
  return cached;
}

SocketAddress interfaceAddress(const std::string& name) {
  InterfaceRules rules{"=" + name, env()->socketFamily, ""};
  return chooseNetInterface(rules, listNetInterfaces()).address;
}

// ---- TcpSocket ----

TcpSocket::TcpSocket(UniqueFd fd, const SocketAddress& peer) : fd_(std::move(fd)), peer_(peer) {}

TcpSocket::TcpSocket(TcpSocket&& other) noexcept
    : fd_(std::move(other.fd_)), peer_(other.peer_), shutdown_(other.shutdown_.load()) {}

TcpSocket& TcpSocket::operator=(TcpSocket&& other) noexcept {
  if (this != &other) {
    fd_ = std::move(other.fd_);
    peer_ = other.peer_;
    shutdown_.store(other.shutdown_.load());
  }
  return *this;
}

namespace {

bool retryableConnectError(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == ECONNRESET || err == ECONNABORTED || err == EAGAIN;
}

bool sameEndpoint(int fd, const SocketAddress& to) {
  SocketAddress local = emptySocketAddress();
  socklen_t len = sizeof(local);
  return getsockname(fd, &local.sa, &len) == 0 && local == to;
}

}  // namespace

TcpSocket TcpSocket::connect(const SocketAddress& to, const Deadline& deadline, const std::string& what) {
  socklen_t len = socketAddressLength(to);
  MSCCLPP_CHECK_USAGE(len != 0, what, ": cannot connect to an unset address");
  auto backoff = std::chrono::milliseconds(5);
  int lastError = 0;
  while (true) {
    UniqueFd fd(::socket(to.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) throw SysError(concat(what, ": socket() to connect to ", toString(to), " failed"), errno);
    int err = 0;
    if (::connect(fd.get(), &to.sa, len) != 0) err = errno;
    if (err == EINPROGRESS || err == EINTR) {
      pollfd pfd{fd.get(), POLLOUT, 0};
      int rc;
      do {
        rc = ::poll(&pfd, 1, deadline.pollTimeoutMs());
      } while (rc < 0 && errno == EINTR);
      if (rc < 0) throw SysError(concat(what, ": poll() while connecting to ", toString(to), " failed"), errno);
      if (rc == 0) {
        err = ETIMEDOUT;
      } else {
        socklen_t errLen = sizeof(err);
        if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &errLen) != 0) err = errno;
      }
    }
    // Retrying a local port can make TCP connect the socket to itself (simultaneous open); that is a
    // refusal in disguise.
    if (err == 0 && sameEndpoint(fd.get(), to)) err = ECONNREFUSED;
    if (err == 0) return TcpSocket(std::move(fd), to);
    if (!retryableConnectError(err)) {
      throw SysError(concat(what, ": connect to ", toString(to), " failed"), err);
    }
    lastError = err;
    if (deadline.expired()) break;
    std::this_thread::sleep_for(std::min(backoff, deadline.remaining()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
    if (deadline.expired()) break;
  }
  MSCCLPP_THROW(Timeout, what, ": timed out connecting to ", toString(to), " (last attempt: ", errnoName(lastError),
                ")");
}

void TcpSocket::throwClosed(const char* op) const {
  if (isShutdown()) MSCCLPP_THROW(Aborted, op, ": connection with ", toString(peer_), " was shut down by this process");
  MSCCLPP_THROW(Aborted, op, ": peer ", toString(peer_), " closed the connection");
}

void TcpSocket::waitFor(short events, const Deadline& deadline, const char* op) {
  while (true) {
    if (isShutdown()) throwClosed(op);
    pollfd pfd{fd_.get(), events, 0};
    int rc = ::poll(&pfd, 1, deadline.pollTimeoutMs());
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw SysError(concat(op, ": poll() on connection with ", toString(peer_), " failed"), errno);
    }
    if (rc > 0) return;  // ready, or an error/hangup the next call will report
    if (deadline.expired()) {
      MSCCLPP_THROW(Timeout, op, ": timed out waiting for ", toString(peer_));
    }
  }
}

size_t TcpSocket::trySend(const void* data, size_t size) {
  if (isShutdown()) throwClosed("send");
  if (size == 0) return 0;
  while (true) {
    ssize_t n = ::send(fd_.get(), data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<size_t>(n);
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return 0;
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN || err == ETIMEDOUT) throwClosed("send");
    throw SysError(concat("send to ", toString(peer_), " failed"), err);
  }
}

size_t TcpSocket::tryRecv(void* data, size_t max) {
  if (isShutdown()) throwClosed("recv");
  if (max == 0) return 0;
  while (true) {
    ssize_t n = ::recv(fd_.get(), data, max, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) throwClosed("recv");
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return 0;
    if (err == ECONNRESET || err == ENOTCONN || err == ETIMEDOUT || err == EPIPE) throwClosed("recv");
    throw SysError(concat("recv from ", toString(peer_), " failed"), err);
  }
}

void TcpSocket::sendAll(const void* data, size_t size, const Deadline& deadline) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    size_t n = trySend(p + done, size - done);
    done += n;
    if (done < size && n == 0) waitFor(POLLOUT, deadline, "send");
  }
}

void TcpSocket::sendAllMakingProgress(const void* data, size_t size, std::chrono::milliseconds stall) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    size_t n = trySend(p + done, size - done);
    done += n;
    if (done < size && n == 0) {
      waitFor(POLLOUT, stall.count() < 0 ? Deadline::never() : Deadline::after(stall), "send");
    }
  }
}

void TcpSocket::recvAll(void* data, size_t size, const Deadline& deadline) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    size_t n = tryRecv(p + done, size - done);
    done += n;
    if (done < size && n == 0) waitFor(POLLIN, deadline, "recv");
  }
}

size_t TcpSocket::recvSome(void* data, size_t max, const Deadline& deadline) {
  if (max == 0) return 0;
  while (true) {
    size_t n = tryRecv(data, max);
    if (n > 0) return n;
    waitFor(POLLIN, deadline, "recv");
  }
}

void TcpSocket::setNoDelay() {
  int one = 1;
  MSCCLPP_SYSCHECK(::setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
}

void TcpSocket::shutdown() {
  if (shutdown_.exchange(true, std::memory_order_acq_rel)) return;
  // ENOTCONN after a reset is expected: the point is only to wake whoever waits on the socket.
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

// ---- TcpListener ----

TcpListener::TcpListener(TcpListener&& other) noexcept
    : fd_(std::move(other.fd_)),
      address_(other.address_),
      listening_(other.listening_),
      shutdown_(other.shutdown_.load()) {}

TcpListener& TcpListener::operator=(TcpListener&& other) noexcept {
  if (this != &other) {
    fd_ = std::move(other.fd_);
    address_ = other.address_;
    listening_ = other.listening_;
    shutdown_.store(other.shutdown_.load());
  }
  return *this;
}

TcpListener TcpListener::bindOnly(const SocketAddress& bindTo) {
  socklen_t len = socketAddressLength(bindTo);
  MSCCLPP_CHECK_USAGE(len != 0, "cannot listen on an unset address");
  TcpListener listener;
  listener.fd_.reset(::socket(bindTo.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener.fd_.valid()) throw SysError(concat("socket() to listen on ", toString(bindTo), " failed"), errno);
  int one = 1;
  MSCCLPP_SYSCHECK(::setsockopt(listener.fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
  if (::bind(listener.fd_.get(), &bindTo.sa, len) != 0) {
    throw SysError(concat("bind to ", toString(bindTo), " failed"), errno);
  }
  SocketAddress actual = emptySocketAddress();
  socklen_t actualLen = sizeof(actual);
  MSCCLPP_SYSCHECK(::getsockname(listener.fd_.get(), &actual.sa, &actualLen));
  listener.address_ = actual;
  return listener;
}

void TcpListener::startListening(int backlog) {
  MSCCLPP_CHECK_USAGE(fd_.valid(), "startListening on a listener that holds no socket");
  if (listening_) return;
  if (::listen(fd_.get(), backlog) != 0) throw SysError(concat("listen on ", toString(address_), " failed"), errno);
  listening_ = true;
}

TcpListener TcpListener::listen(const SocketAddress& bindTo, int backlog) {
  TcpListener listener = bindOnly(bindTo);
  listener.startListening(backlog);
  return listener;
}

bool TcpListener::tryAccept(TcpSocket* out) {
  while (true) {
    if (shutdown_.load(std::memory_order_acquire)) {
      MSCCLPP_THROW(Aborted, "accept on ", toString(address_), ": the listener was shut down");
    }
    SocketAddress peer = emptySocketAddress();
    socklen_t len = sizeof(peer);
    int fd = ::accept4(fd_.get(), &peer.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      *out = TcpSocket(UniqueFd(fd), peer);
      return true;
    }
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK) return false;
    // A connection that died in the backlog is the client's problem, not the listener's.
    if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM) continue;
    throw SysError(concat("accept on ", toString(address_), " failed"), err);
  }
}

TcpSocket TcpListener::accept(const Deadline& deadline) {
  MSCCLPP_CHECK_USAGE(listening_, "accept on ", toString(address_), " before startListening");
  while (true) {
    TcpSocket socket;
    if (tryAccept(&socket)) return socket;
    pollfd pfd{fd_.get(), POLLIN, 0};
    int rc = ::poll(&pfd, 1, deadline.pollTimeoutMs());
    if (rc < 0 && errno != EINTR) throw SysError(concat("poll() on listener ", toString(address_), " failed"), errno);
    if (rc == 0 && deadline.expired()) {
      MSCCLPP_THROW(Timeout, "accept on ", toString(address_), ": timed out waiting for a connection");
    }
  }
}

void TcpListener::shutdown() {
  if (shutdown_.exchange(true, std::memory_order_acq_rel)) return;
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

}  // namespace mscclpp
