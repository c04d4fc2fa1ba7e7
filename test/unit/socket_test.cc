// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "bootstrap/socket.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "common/checks.hpp"

using namespace mscclpp;
using namespace std::chrono_literals;

namespace {

SocketAddress loopback(uint16_t port = 0) { return parseSocketAddress("127.0.0.1:" + std::to_string(port)); }

template <typename F>
ErrorCode errorCodeOf(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.getErrorCode();
  }
  ADD_FAILURE() << "expected an Error";
  return ErrorCode::InternalError;
}

// A connected pair over loopback: {client side, server side}.
std::pair<TcpSocket, TcpSocket> connectedPair() {
  TcpListener listener = TcpListener::listen(loopback());
  auto client = std::async(std::launch::async,
                           [&] { return TcpSocket::connect(listener.address(), Deadline::after(10s), "test client"); });
  TcpSocket server = listener.accept(Deadline::after(10s));
  return {client.get(), std::move(server)};
}

NetInterface fakeInterface(const std::string& name, const std::string& ip, const std::string& mask) {
  NetInterface itf;
  itf.name = name;
  bool v6 = ip.find(':') != std::string::npos;
  itf.address = parseSocketAddress(v6 ? "[" + ip + "]:0" : ip + ":0");
  itf.netmask = parseSocketAddress(v6 ? "[" + mask + "]:0" : mask + ":0");
  return itf;
}

}  // namespace

TEST(DeadlineTest, NeverHasNoPollLimitAndDoesNotExpire) {
  Deadline d = Deadline::never();
  EXPECT_TRUE(d.isNever());
  EXPECT_FALSE(d.expired());
  EXPECT_EQ(d.pollTimeoutMs(), -1);
  EXPECT_TRUE(Deadline::fromTimeoutSec(-1).isNever());
}

TEST(DeadlineTest, AfterCountsDownAndExpires) {
  Deadline d = Deadline::after(10s);
  EXPECT_FALSE(d.expired());
  EXPECT_GT(d.pollTimeoutMs(), 0);
  EXPECT_LE(d.pollTimeoutMs(), 10000);
  EXPECT_LE(d.remaining(), 10s);
  Deadline past = Deadline::after(0ms);
  EXPECT_TRUE(past.expired());
  EXPECT_EQ(past.pollTimeoutMs(), 0);
  EXPECT_EQ(past.remaining(), 0ms);
}

TEST(DeadlineTest, FromTimeoutSecUsesSeconds) {
  Deadline d = Deadline::fromTimeoutSec(2);
  EXPECT_FALSE(d.isNever());
  EXPECT_GT(d.remaining(), 1s);
  EXPECT_LE(d.remaining(), 2s);
  EXPECT_TRUE(Deadline::fromTimeoutSec(0).expired());
}

TEST(DeadlineTest, MinPicksTheEarlier) {
  Deadline soon = Deadline::after(1s), late = Deadline::after(100s);
  EXPECT_LE(soon.min(late).remaining(), 1s);
  EXPECT_LE(late.min(soon).remaining(), 1s);
  EXPECT_FALSE(Deadline::never().min(soon).isNever());
}

TEST(SocketAddressTest, PrintsIpv4AndIpv6) {
  EXPECT_EQ(toString(parseSocketAddress("1.2.3.4:5")), "1.2.3.4:5");
  EXPECT_EQ(toString(parseSocketAddress("[::1]:5")), "[::1]:5");
  EXPECT_EQ(toString(emptySocketAddress()), "<unset>");
}

TEST(SocketAddressTest, RoundTripsThroughText) {
  for (const char* text : {"127.0.0.1:65535", "10.0.0.1:0", "[fd00::2]:5000", "[::1]:1"}) {
    SocketAddress a = parseSocketAddress(text);
    EXPECT_EQ(toString(a), text);
    EXPECT_EQ(parseSocketAddress(toString(a)), a);
  }
}

TEST(SocketAddressTest, ParsesFamiliesAndPorts) {
  SocketAddress v4 = parseSocketAddress("192.0.2.7:4242");
  EXPECT_EQ(v4.sa.sa_family, AF_INET);
  EXPECT_EQ(socketAddressPort(v4), 4242);
  EXPECT_EQ(socketAddressLength(v4), sizeof(sockaddr_in));
  SocketAddress v6 = parseSocketAddress("[fd00::2]:80");
  EXPECT_EQ(v6.sa.sa_family, AF_INET6);
  EXPECT_EQ(socketAddressPort(v6), 80);
  EXPECT_EQ(socketAddressLength(v6), sizeof(sockaddr_in6));
  EXPECT_EQ(socketAddressPort(withPort(v6, 9)), 9);
}

TEST(SocketAddressTest, ResolvesHostNames) {
  SocketAddress a = parseSocketAddress("localhost:8080");
  EXPECT_EQ(socketAddressPort(a), 8080);
  EXPECT_TRUE(a.sa.sa_family == AF_INET || a.sa.sa_family == AF_INET6);
}

TEST(SocketAddressTest, SplitsOffAnInterfaceName) {
  std::string ifname;
  SocketAddress a = parseSocketAddress("eth0:10.1.2.3:5000", &ifname);
  EXPECT_EQ(ifname, "eth0");
  EXPECT_EQ(toString(a), "10.1.2.3:5000");
  a = parseSocketAddress("ib0:[fd00::7]:6000", &ifname);
  EXPECT_EQ(ifname, "ib0");
  EXPECT_EQ(toString(a), "[fd00::7]:6000");
  a = parseSocketAddress("eth1:fd00::8:7000", &ifname);
  EXPECT_EQ(ifname, "eth1");
  EXPECT_EQ(toString(a), "[fd00::8]:7000");
  a = parseSocketAddress("10.1.2.3:5000", &ifname);
  EXPECT_EQ(ifname, "");
}

TEST(SocketAddressTest, RejectsBadStringsNamingThem) {
  for (const char* bad : {"", "1.2.3.4", "1.2.3.4:", "1.2.3.4:abc", "1.2.3.4:70000", "1.2.3.4:-1", "[::1:5", "[::1]5",
                          "[1.2.3.4]:5", ":5", "no-such-host.invalid:5", "eth0::5"}) {
    std::string message;
    EXPECT_EQ(errorCodeOf([&] { parseSocketAddress(bad); }, &message), ErrorCode::InvalidUsage) << bad;
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
  }
}

TEST(SocketAddressTest, EqualityComparesFamilyIpAndPort) {
  EXPECT_EQ(parseSocketAddress("1.2.3.4:5"), parseSocketAddress("1.2.3.4:5"));
  EXPECT_NE(parseSocketAddress("1.2.3.4:5"), parseSocketAddress("1.2.3.4:6"));
  EXPECT_NE(parseSocketAddress("1.2.3.4:5"), parseSocketAddress("1.2.3.5:5"));
  EXPECT_NE(parseSocketAddress("[::1]:5"), parseSocketAddress("127.0.0.1:5"));
}

TEST(TcpSocketTest, SendsAndReceivesOverLoopback) {
  auto [client, server] = connectedPair();
  client.setNoDelay();
  EXPECT_EQ(server.peer().sa.sa_family, AF_INET);
  // Larger than the socket buffers, in both directions at once, so both sides must wait for space.
  std::vector<int> out(4 << 20), in(out.size()), back(out.size());
  std::iota(out.begin(), out.end(), 0);
  auto echo = std::async(std::launch::async, [&, &server = server] {
    server.recvAll(in.data(), in.size() * sizeof(int), Deadline::after(30s));
    server.sendAll(in.data(), in.size() * sizeof(int), Deadline::after(30s));
  });
  client.sendAll(out.data(), out.size() * sizeof(int), Deadline::after(30s));
  client.recvAll(back.data(), back.size() * sizeof(int), Deadline::after(30s));
  echo.get();
  EXPECT_EQ(back, out);
}

TEST(TcpSocketTest, RecvSomeReturnsWhatArrived) {
  auto [client, server] = connectedPair();
  const char msg[] = "hello";
  client.sendAll(msg, 5, Deadline::after(10s));
  char buf[64];
  size_t got = 0;
  while (got < 5) got += server.recvSome(buf + got, sizeof(buf) - got, Deadline::after(10s));
  EXPECT_EQ(got, 5u);
  EXPECT_EQ(std::string(buf, 5), "hello");
}

TEST(TcpSocketTest, PeerCloseIsAbortedOnRecv) {
  auto [client, server] = connectedPair();
  SocketAddress serverSide = client.peer();
  { TcpSocket gone = std::move(server); }
  char byte;
  std::string message;
  EXPECT_EQ(errorCodeOf([&] { client.recvAll(&byte, 1, Deadline::after(10s)); }, &message), ErrorCode::Aborted);
  EXPECT_NE(message.find("peer " + toString(serverSide) + " closed the connection"), std::string::npos) << message;
}

TEST(TcpSocketTest, PeerCloseIsAbortedOnSendWithoutSigpipe) {
  auto [client, server] = connectedPair();
  { TcpSocket gone = std::move(server); }
  std::vector<char> chunk(1 << 16);
  // The first sends may still be buffered; the reset that follows must surface as Aborted.
  EXPECT_EQ(errorCodeOf([&] {
              for (int i = 0; i < 10000; ++i) client.sendAll(chunk.data(), chunk.size(), Deadline::after(10s));
            }),
            ErrorCode::Aborted);
}

TEST(TcpSocketTest, RecvTimesOutAtTheDeadline) {
  auto [client, server] = connectedPair();
  char byte;
  EXPECT_EQ(errorCodeOf([&] { server.recvAll(&byte, 1, Deadline::after(100ms)); }), ErrorCode::Timeout);
}

TEST(TcpSocketTest, ConnectToANonListeningPortTimesOutNamingIt) {
  // A bound but not listening socket holds the port, so nothing else can answer there.
  TcpListener reserved = TcpListener::bindOnly(loopback());
  std::string message;
  EXPECT_EQ(
      errorCodeOf([&] { TcpSocket::connect(reserved.address(), Deadline::after(200ms), "the test peer"); }, &message),
      ErrorCode::Timeout);
  EXPECT_NE(message.find("the test peer"), std::string::npos) << message;
  EXPECT_NE(message.find(toString(reserved.address())), std::string::npos) << message;
}

TEST(TcpSocketTest, ConnectRetriesUntilTheListenerAppears) {
  TcpListener reserved = TcpListener::bindOnly(loopback());
  SocketAddress address = reserved.address();
  auto client = std::async(std::launch::async,
                           [&] { return TcpSocket::connect(address, Deadline::after(20s), "late listener"); });
  std::this_thread::sleep_for(100ms);
  reserved.startListening();
  TcpSocket server = reserved.accept(Deadline::after(20s));
  TcpSocket connected = client.get();
  EXPECT_TRUE(connected.valid());
}

TEST(TcpSocketTest, ShutdownUnblocksARecvInAnotherThread) {
  auto [client, server] = connectedPair();
  std::atomic<bool> started{false};
  auto blocked = std::async(std::launch::async, [&, &server = server] {
    started = true;
    char byte;
    return errorCodeOf([&] { server.recvAll(&byte, 1, Deadline::never()); });
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(50ms);
  server.shutdown();
  server.shutdown();  // idempotent
  EXPECT_EQ(blocked.get(), ErrorCode::Aborted);
  EXPECT_TRUE(server.isShutdown());
}

TEST(TcpSocketTest, OperationsAfterShutdownAreAborted) {
  auto [client, server] = connectedPair();
  client.shutdown();
  char byte = 0;
  EXPECT_EQ(errorCodeOf([&] { client.sendAll(&byte, 1, Deadline::after(1s)); }), ErrorCode::Aborted);
  EXPECT_EQ(errorCodeOf([&] { client.recvAll(&byte, 1, Deadline::after(1s)); }), ErrorCode::Aborted);
  // The other side sees the connection end.
  EXPECT_EQ(errorCodeOf([&, &server = server] { server.recvAll(&byte, 1, Deadline::after(10s)); }), ErrorCode::Aborted);
}

TEST(TcpListenerTest, ReportsTheEphemeralPort) {
  TcpListener listener = TcpListener::listen(loopback());
  EXPECT_NE(socketAddressPort(listener.address()), 0);
  EXPECT_TRUE(listener.listening());
}

TEST(TcpListenerTest, AcceptTimesOutAtTheDeadline) {
  TcpListener listener = TcpListener::listen(loopback());
  EXPECT_EQ(errorCodeOf([&] { listener.accept(Deadline::after(100ms)); }), ErrorCode::Timeout);
  TcpSocket none;
  EXPECT_FALSE(listener.tryAccept(&none));
}

TEST(TcpListenerTest, ShutdownWakesABlockedAccept) {
  TcpListener listener = TcpListener::listen(loopback());
  auto blocked =
      std::async(std::launch::async, [&] { return errorCodeOf([&] { listener.accept(Deadline::never()); }); });
  std::this_thread::sleep_for(50ms);
  listener.shutdown();
  EXPECT_EQ(blocked.get(), ErrorCode::Aborted);
}

TEST(TcpListenerTest, AReservedAddressCanBeBoundAgainAndListenedOn) {
  // What a UniqueId relies on when the process that made it is not rank 0.
  TcpListener reserved = TcpListener::bindOnly(loopback());
  TcpListener second = TcpListener::listen(reserved.address());
  EXPECT_EQ(second.address(), reserved.address());
  auto client = std::async(std::launch::async, [&] {
    return TcpSocket::connect(second.address(), Deadline::after(10s), "second listener");
  });
  TcpSocket accepted = second.accept(Deadline::after(10s));
  EXPECT_TRUE(client.get().valid());
}

TEST(TcpListenerTest, BindingABadAddressIsASystemError) {
  // 198.51.100.0/24 is reserved for documentation (TEST-NET-2), so it is no local address.
  EXPECT_THROW(TcpListener::listen(parseSocketAddress("198.51.100.1:0")), SysError);
}

TEST(InterfaceTest, IfnameSelectsLoopback) {
  NetInterface itf = chooseNetInterface({"lo", "", ""}, listNetInterfaces());
  EXPECT_EQ(itf.name, "lo");
  EXPECT_EQ(toString(itf.address), "127.0.0.1:0");
  itf = chooseNetInterface({"lo", "AF_INET6", ""}, listNetInterfaces());
  EXPECT_EQ(toString(itf.address), "[::1]:0");
}

TEST(InterfaceTest, LocalInterfaceAddressIsUsableForListening) {
  SocketAddress local = localInterfaceAddress();
  EXPECT_TRUE(local.sa.sa_family == AF_INET || local.sa.sa_family == AF_INET6);
  EXPECT_EQ(socketAddressPort(local), 0);
  EXPECT_EQ(localInterfaceAddress(), local);  // cached
  TcpListener listener = TcpListener::listen(local);
  EXPECT_NE(socketAddressPort(listener.address()), 0);
}

TEST(InterfaceTest, PrefersIbThenOthersThenDockerThenLoopback) {
  NetInterface lo = fakeInterface("lo", "127.0.0.1", "255.0.0.0");
  NetInterface docker = fakeInterface("docker0", "172.17.0.1", "255.255.0.0");
  NetInterface eth = fakeInterface("eth0", "10.0.0.5", "255.255.255.0");
  NetInterface ib = fakeInterface("ib0", "10.1.0.5", "255.255.255.0");
  EXPECT_EQ(chooseNetInterface({}, {lo, docker, eth, ib}).name, "ib0");
  EXPECT_EQ(chooseNetInterface({}, {lo, docker, eth}).name, "eth0");
  EXPECT_EQ(chooseNetInterface({}, {lo, docker}).name, "docker0");
  EXPECT_EQ(chooseNetInterface({}, {lo}).name, "lo");
  EXPECT_EQ(errorCodeOf([] { chooseNetInterface({}, {}); }), ErrorCode::InvalidUsage);
}

TEST(InterfaceTest, IfnameHonoursPrefixExactAndExclude) {
  std::vector<NetInterface> all = {fakeInterface("eth0", "10.0.0.5", "255.255.255.0"),
                                   fakeInterface("eth10", "10.0.1.5", "255.255.255.0"),
                                   fakeInterface("lo", "127.0.0.1", "255.0.0.0")};
  EXPECT_EQ(chooseNetInterface({"eth1", "", ""}, all).name, "eth10");
  EXPECT_EQ(chooseNetInterface({"=eth0", "", ""}, all).name, "eth0");
  EXPECT_EQ(errorCodeOf([&] { chooseNetInterface({"=eth1", "", ""}, all); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(chooseNetInterface({"^eth", "", ""}, all).name, "lo");
  EXPECT_EQ(chooseNetInterface({"^=eth0", "", ""}, all).name, "eth10");
  EXPECT_EQ(chooseNetInterface({"wlan,lo", "", ""}, all).name, "lo");
  std::string message;
  EXPECT_EQ(errorCodeOf([&] { chooseNetInterface({"wlan", "", ""}, all); }, &message), ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("MSCCLPP_SOCKET_IFNAME='wlan'"), std::string::npos) << message;
}

TEST(InterfaceTest, CommIdPicksTheMatchingSubnet) {
  std::vector<NetInterface> all = {fakeInterface("eth0", "10.0.0.5", "255.255.255.0"),
                                   fakeInterface("eth1", "10.9.0.5", "255.255.0.0")};
  EXPECT_EQ(chooseNetInterface({"", "", "10.9.44.1:5000"}, all).name, "eth1");
  EXPECT_EQ(chooseNetInterface({"", "", "192.168.0.1:5000"}, all).name, "eth0");  // no match: the usual order
  EXPECT_EQ(errorCodeOf([&] { chooseNetInterface({"", "", "garbage"}, all); }), ErrorCode::InvalidUsage);
}

TEST(InterfaceTest, FamilyIsForcedOrIpv4Preferred) {
  std::vector<NetInterface> all = {fakeInterface("eth0", "fd00::5", "ffff:ffff:ffff:ffff::"),
                                   fakeInterface("eth0", "10.0.0.5", "255.255.255.0")};
  EXPECT_EQ(chooseNetInterface({}, all).address.sa.sa_family, AF_INET);
  EXPECT_EQ(chooseNetInterface({"", "AF_INET6", ""}, all).address.sa.sa_family, AF_INET6);
  EXPECT_EQ(chooseNetInterface({"", "AF_INET", ""}, all).address.sa.sa_family, AF_INET);
  EXPECT_EQ(errorCodeOf([&] { chooseNetInterface({"", "AF_UNIX", ""}, all); }), ErrorCode::InvalidUsage);
}
