// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Ethernet connection over host memory: a ping-pong of write + updateAndSync + Host2HostSemaphore wait
// between ranks 0 and 1, next to a raw TCP ping-pong of the same sizes between the same processes.

#include <mscclpp/semaphore.hpp>
#include <vector>

#include "bench/bench.hpp"
#include "bootstrap/socket.hpp"

namespace mscclpp::bench {
namespace {

std::vector<size_t> pingPongSizes(bool quick) {
  std::vector<size_t> sizes;
  for (size_t s = 1 << 10; s <= (64 << 20); s *= (quick ? 64 : 4)) sizes.push_back(s);
  if (quick && sizes.back() != (64 << 20)) sizes.push_back(64 << 20);
  return sizes;
}

int iterationsFor(size_t bytes, bool quick) {
  if (bytes <= (64 << 10)) return quick ? 200 : 2000;
  if (bytes <= (4 << 20)) return quick ? 20 : 100;
  return quick ? 3 : 10;
}

/// Round-trip seconds of a raw TCP ping-pong of `bytes` each way (median of samples).
double rawTcpRoundTrip(TcpSocket& socket, std::vector<char>& buffer, size_t bytes, int iters, bool initiator) {
  std::vector<double> samples;
  const Deadline deadline = Deadline::after(std::chrono::seconds(120));
  for (int i = 0; i < iters + 2; ++i) {
    double t0 = nowSec();
    if (initiator) {
      socket.sendAll(buffer.data(), bytes, deadline);
      socket.recvAll(buffer.data(), bytes, deadline);
    } else {
      socket.recvAll(buffer.data(), bytes, deadline);
      socket.sendAll(buffer.data(), bytes, deadline);
    }
    if (i >= 2) samples.push_back(nowSec() - t0);
  }
  return median(samples);
}

std::vector<Table> ethernetPingPong(BenchContext& ctx) {
  auto bootstrap = ctx.bootstrap();  // collective: every rank makes it
  if (ctx.rank > 1) {
    // Only ranks 0 and 1 take part; the others wait so that the section ends together.
    bootstrap->barrier();
    return {};
  }
  const int peer = 1 - ctx.rank;
  const bool initiator = ctx.rank == 0;
  const size_t maxBytes = 64 << 20;

  // Raw TCP between the same two processes: rank 1 listens, rank 0 connects.
  TcpSocket raw;
  if (initiator) {
    SocketAddress address;
    MPI_Recv(&address, sizeof(address), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    raw = TcpSocket::connect(address, Deadline::after(std::chrono::seconds(30)), "raw TCP peer");
  } else {
    TcpListener listener = TcpListener::listen(localInterfaceAddress());
    SocketAddress address = listener.address();
    MPI_Send(&address, sizeof(address), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    raw = listener.accept(Deadline::after(std::chrono::seconds(30)));
  }
  raw.setNoDelay();

  // The library: an Ethernet connection between host buffers.
  Communicator comm(bootstrap);
  std::vector<char> buffer(maxBytes, 1);
  RegisteredMemory local = comm.registerMemory(buffer.data(), buffer.size(), Transport::Ethernet);
  comm.sendMemory(local, peer, 50);
  RegisteredMemory remote = comm.recvMemory(peer, 50).get();
  Connection connection = comm.connect({Transport::Ethernet, DeviceType::CPU}, peer, 50).get();
  Host2HostSemaphore semaphore(comm, connection);

  Table table{
      "Ethernet connection ping-pong over host memory (ranks 0 and 1): write + updateAndSync + "
      "Host2HostSemaphore::wait each way, against a raw TCP ping-pong in the same run",
      {"size", "lib_rtt_us", "tcp_rtt_us", "rtt_ratio", "lib_GB/s", "tcp_GB/s", "bw_ratio"},
      {},
      {}};
  for (size_t bytes : pingPongSizes(ctx.quick)) {
    const int iters = iterationsFor(bytes, ctx.quick);
    double tcp = rawTcpRoundTrip(raw, buffer, bytes, iters, initiator);
    std::vector<double> samples;
    for (int i = 0; i < iters + 2; ++i) {
      double t0 = nowSec();
      if (initiator) {
        connection.write(remote, 0, local, 0, bytes);
        semaphore.signal();
        semaphore.wait(-1);
      } else {
        semaphore.wait(-1);
        connection.write(remote, 0, local, 0, bytes);
        semaphore.signal();
      }
      if (i >= 2) samples.push_back(nowSec() - t0);
    }
    double lib = median(samples);
    // Bandwidth counts the bytes of both directions of one round trip.
    table.rows.push_back({fmtSize(bytes), fmt(lib * 1e6, 1), fmt(tcp * 1e6, 1), fmt(lib / tcp),
                          fmt(2.0 * bytes / lib / 1e9, 3), fmt(2.0 * bytes / tcp / 1e9, 3), fmt(tcp / lib)});
  }
  table.notes.push_back(
      "median round trip of each size; GB/s = 2 x size / round trip; "
      "bw_ratio = library bandwidth / raw TCP bandwidth");
  bootstrap->barrier();
  return {table};
}

}  // namespace

MSCCLPP_BENCH_SECTION(ethernet, Section{"ethernet", "Ethernet ping-pong latency and bandwidth vs raw TCP (host memory)",
                                        [](BenchContext& ctx) -> std::string {
                                          return ctx.nRanks < 2 ? "needs at least 2 ranks" : "";
                                        },
                                        ethernetPingPong});

}  // namespace mscclpp::bench
