// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The control plane's speed: TcpBootstrap allGather, barrier and send/recv between the local ranks,
// next to a raw TCP ping-pong between the same processes (plain blocking sockets, TCP_NODELAY,
// measured in the same run). A ring allGather makes n-1 dependent steps, so the raw figure it is
// compared with is (n-1) one-way trips.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "bootstrap/socket.hpp"

namespace mscclpp::bench {
namespace {

void rawCheck(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("raw TCP reference: ") + what + ": " + std::strerror(errno));
}

void rawSendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    rawCheck(n > 0, "send");
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void rawRecvAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::recv(fd, data, size, 0);
    rawCheck(n > 0, "recv");
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Pairs ranks (0,1), (2,3), ... over plain sockets; the even rank connects. Returns -1 for an odd
// rank out. Addresses travel over MPI so the reference does not depend on the code it is compared with.
int rawPairSocket(BenchContext& ctx) {
  const bool hasPartner = (ctx.rank ^ 1) < ctx.nRanks;
  int listenFd = -1;
  SocketAddress mine = emptySocketAddress();
  if (ctx.rank % 2 == 1) {
    mine = localInterfaceAddress();
    listenFd = ::socket(mine.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    rawCheck(listenFd >= 0, "socket");
    rawCheck(::bind(listenFd, &mine.sa, socketAddressLength(mine)) == 0, "bind");
    rawCheck(::listen(listenFd, 1) == 0, "listen");
    socklen_t len = sizeof(mine);
    rawCheck(::getsockname(listenFd, &mine.sa, &len) == 0, "getsockname");
  }
  std::vector<SocketAddress> all(ctx.nRanks);
  MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
  int fd = -1;
  if (hasPartner && ctx.rank % 2 == 0) {
    const SocketAddress& to = all[ctx.rank + 1];
    fd = ::socket(to.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    rawCheck(fd >= 0, "socket");
    rawCheck(::connect(fd, &to.sa, socketAddressLength(to)) == 0, "connect");
  } else if (hasPartner) {
    fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    rawCheck(fd >= 0, "accept");
  }
  if (listenFd >= 0) ::close(listenFd);
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

// Median round trip of `bytes` there and back on a raw pair socket (even rank starts).
double rawRoundTrip(int fd, bool starts, size_t bytes, int iters) {
  std::vector<char> buf(bytes, 1);
  std::vector<double> samples;
  for (int i = -10; i < iters; ++i) {
    double t0 = nowSec();
    if (starts) {
      rawSendAll(fd, buf.data(), bytes);
      rawRecvAll(fd, buf.data(), bytes);
    } else {
      rawRecvAll(fd, buf.data(), bytes);
      rawSendAll(fd, buf.data(), bytes);
    }
    if (i >= 0) samples.push_back(nowSec() - t0);
  }
  return median(samples);
}

// The largest of the ranks' medians: a collective is as slow as its slowest member.
double maxOverRanks(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

template <typename F>
double medianOf(int iters, F&& op) {
  std::vector<double> samples;
  for (int i = -10; i < iters; ++i) {
    double t0 = nowSec();
    op();
    if (i >= 0) samples.push_back(nowSec() - t0);
  }
  return median(samples);
}

std::vector<Table> run(BenchContext& ctx) {
  auto bootstrap = ctx.bootstrap();
  const int n = ctx.nRanks;
  const int scale = ctx.quick ? 10 : 1;
  struct Case {
    std::string op;
    size_t bytes;
    int iters;
  };
  const std::vector<Case> cases = {{"allGather", 8, 2000 / scale},
                                   {"allGather", 64 << 10, 400 / scale},
                                   {"barrier", 4, 2000 / scale},
                                   {"send/recv ping-pong", 8, 2000 / scale},
                                   {"send/recv ping-pong", 64 << 10, 400 / scale}};

  const int rawFd = rawPairSocket(ctx);
  Table table{"TcpBootstrap over " + std::to_string(n) + " local ranks vs raw TCP between the same processes",
              {"operation", "bytes/rank", "bootstrap_us", "raw_rtt_us", "raw_equiv_us", "x_raw"},
              {},
              {}};
  for (const Case& c : cases) {
    // The raw reference first, for this size, between ranks 0 and 1 (and 2 and 3, ... at the same time).
    ctx.mpiBarrier();
    double rtt = rawFd >= 0 ? rawRoundTrip(rawFd, ctx.rank % 2 == 0, c.bytes, c.iters) : 0;
    MPI_Bcast(&rtt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    ctx.mpiBarrier();
    double t = 0, equivalent = 0;
    if (c.op == "allGather") {
      std::vector<char> all(c.bytes * n, 1);
      t = medianOf(c.iters, [&] { bootstrap->allGather(all.data(), static_cast<int>(c.bytes)); });
      equivalent = (n - 1) * rtt / 2;
    } else if (c.op == "barrier") {
      t = medianOf(c.iters, [&] { bootstrap->barrier(); });
      equivalent = (n - 1) * rtt / 2;
    } else {
      std::vector<char> buf(c.bytes, 1);
      const int peer = ctx.rank ^ 1;
      if (peer < n) {
        t = medianOf(c.iters, [&] {
          if (ctx.rank % 2 == 0) {
            bootstrap->send(buf.data(), static_cast<int>(c.bytes), peer, 1);
            bootstrap->recv(buf.data(), static_cast<int>(c.bytes), peer, 1);
          } else {
            bootstrap->recv(buf.data(), static_cast<int>(c.bytes), peer, 1);
            bootstrap->send(buf.data(), static_cast<int>(c.bytes), peer, 1);
          }
        });
      }
      equivalent = rtt;
    }
    t = maxOverRanks(t);
    table.rows.push_back({c.op, fmtSize(c.bytes), fmt(t * 1e6, 1), fmt(rtt * 1e6, 1), fmt(equivalent * 1e6, 1),
                          equivalent > 0 ? fmt(t / equivalent, 2) : "-"});
  }
  if (rawFd >= 0) ::close(rawFd);
  table.notes.push_back("median per call over repeated calls, the largest median of all ranks");
  table.notes.push_back("raw_rtt_us: plain-socket ping-pong round trip of the same size between ranks 0 and 1");
  table.notes.push_back(
      "raw_equiv_us: the raw sockets' time for the same dependent steps: (n-1) one-way trips for "
      "a ring collective (a lower bound: in a ring step every rank sends and receives at once), "
      "one round trip for the ping-pong");
  return {table};
}

}  // namespace

MSCCLPP_BENCH_SECTION(bootstrap, Section{"bootstrap", "TcpBootstrap allGather, barrier and send/recv latency",
                                         [](BenchContext& ctx) -> std::string {
                                           return ctx.nRanks >= 2 ? "" : "needs at least 2 ranks";
                                         },
                                         run});

}  // namespace mscclpp::bench
