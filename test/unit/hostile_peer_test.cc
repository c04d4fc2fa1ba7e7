// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Peers that misbehave, stop or die, as real processes: each test forks its peer before this process
// starts threads of its own; the two talk over a socketpair (endpoints, serialized memory, results)
// and over real Ethernet connections. Target buffers carry canary bytes around the registered range,
// so a write that lands anywhere it should not is seen. Every wait is bounded; a peer left behind is
// killed when its test ends, or by the kernel when this process dies.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/core.hpp>
#include <mscclpp/gpu.hpp>
#include <mscclpp/semaphore.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "common/gpu_test.hpp"
#include "common/process_stats.hpp"
#include "transport/access.hpp"
#include "transport/ethernet/ethernet_connection.hpp"
#include "transport/ethernet/ethernet_endpoint.hpp"

using namespace mscclpp;
using namespace std::chrono_literals;

namespace {

const EndpointConfig kHostEthernet{Transport::Ethernet, DeviceType::CPU};
constexpr char kCanary = 0x5a;

// Length-prefixed messages over one end of a socketpair; every read is bounded.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const std::vector<char>& bytes) {
    uint64_t n = bytes.size();
    writeAll(&n, sizeof(n));
    writeAll(bytes.data(), bytes.size());
  }
  std::vector<char> recv(std::chrono::milliseconds limit = 10s) {
    uint64_t n = 0;
    readAll(&n, sizeof(n), limit);
    std::vector<char> bytes(n);
    readAll(bytes.data(), n, limit);
    return bytes;
  }
  void sendInt(int64_t v) { send(std::vector<char>(reinterpret_cast<char*>(&v), reinterpret_cast<char*>(&v) + 8)); }
  int64_t recvInt(std::chrono::milliseconds limit = 10s) {
    auto bytes = recv(limit);
    int64_t v = 0;
    if (bytes.size() == 8) std::memcpy(&v, bytes.data(), 8);
    return v;
  }

 private:
  void writeAll(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::write(fd_, p, size);
      if (n <= 0) throw std::runtime_error("channel write failed");
      p += n;
      size -= n;
    }
  }
  void readAll(void* data, size_t size, std::chrono::milliseconds limit) {
    char* p = static_cast<char*>(data);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (size > 0) {
      pollfd pfd{fd_, POLLIN, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
        throw std::runtime_error("channel read timed out");
      }
      ssize_t n = ::read(fd_, p, size);
      if (n <= 0) throw std::runtime_error("channel closed");
      p += n;
      size -= n;
    }
  }
  int fd_;
};

// A peer process running `body`; it exits 0 when the body returns, 1 when it throws. It dies with
// this process and never outlives its test.
class Peer {
 public:
  explicit Peer(const std::function<void(Channel&)>& body) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::close(fds[0]);
      ::alarm(60);
      Channel channel(fds[1]);
      int code = 0;
      try {
        body(channel);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "peer failed: %s\n", e.what());
        code = 1;
      }
      ::_exit(code);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Peer() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(fd_);
  }
  Channel channel() { return Channel(fd_); }
  void signal(int sig) { ::kill(pid_, sig); }
  /// The exit code, or -1 if it did not exit within `limit` (it is then killed).
  int wait(std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        reaped_ = true;
        return -1;
      }
      std::this_thread::sleep_for(5ms);
    }
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
};

// Both sides: an Ethernet connection over host memory, endpoints swapped over the channel.
Connection connectOver(Channel channel, const std::shared_ptr<Context>& context) {
  Endpoint local = context->createEndpoint(kHostEthernet);
  channel.send(local.serialize());
  Endpoint remote = Endpoint::deserialize(channel.recv());
  return context->connect(local, remote);
}

// A buffer with `pad` canary bytes on each side of its `size` payload bytes.
struct Guarded {
  Guarded(size_t size, size_t pad = 64) : bytes(size + 2 * pad, kCanary), pad(pad), size(size) {}
  char* data() { return bytes.data() + pad; }
  bool canariesIntact() const {
    for (size_t i = 0; i < pad; ++i) {
      if (bytes[i] != kCanary || bytes[pad + size + i] != kCanary) return false;
    }
    return true;
  }
  bool payloadIs(char value) const {
    for (size_t i = 0; i < size; ++i) {
      if (bytes[pad + i] != value) return false;
    }
    return true;
  }
  std::vector<char> bytes;
  size_t pad, size;
};

// The peer writes `size` bytes of 'x' from its own memory into the serialized destination it is sent,
// then reports whether flush succeeded (1) or failed (0).
void writeWhatIsSent(Channel& channel, size_t size) {
  auto context = Context::create();
  Connection connection = connectOver(channel, context);
  std::vector<char> src(size, 'x');
  RegisteredMemory srcMem = context->registerMemory(src.data(), src.size(), Transport::Ethernet);
  for (;;) {
    std::vector<char> target = channel.recv(20s);
    if (target.empty()) return;
    RegisteredMemory dst = RegisteredMemory::deserialize(target);
    bool ok = true;
    try {
      connection.write(dst, 0, srcMem, 0, size);
      connection.flush(5000000);
    } catch (const Error&) {
      ok = false;
    }
    channel.sendInt(ok ? 1 : 0);
  }
}

}  // namespace

// ---- who may write: only memory registered for Ethernet by the connection's own Context ----

TEST(HostilePeerTest, EthernetWritesLandOnlyInMemoryRegisteredForEthernetByTheConnectionsContext) {
  Peer p([](Channel& channel) { writeWhatIsSent(channel, 256); });
  Channel channel = p.channel();
  auto context = Context::create();
  auto other = Context::create();
  Connection connection = connectOver(channel, context);
  Guarded legit(256), otherContext(256), notForEthernet(256);
  std::fill(legit.data(), legit.data() + 256, 0);
  std::fill(otherContext.data(), otherContext.data() + 256, 0);
  std::fill(notForEthernet.data(), notForEthernet.data() + 256, 0);
  RegisteredMemory legitMem = context->registerMemory(legit.data(), 256, Transport::Ethernet);
  RegisteredMemory otherMem = other->registerMemory(otherContext.data(), 256, Transport::Ethernet);
  RegisteredMemory plainMem = context->registerMemory(notForEthernet.data(), 256, NoTransports);

  channel.send(legitMem.serialize());
  EXPECT_EQ(channel.recvInt(), 1) << "the control write into memory registered for Ethernet failed";
  EXPECT_TRUE(legit.payloadIs('x'));
  EXPECT_TRUE(legit.canariesIntact());

  // Memory of another Context of this process: refused, and the connection is closed.
  channel.send(otherMem.serialize());
  EXPECT_EQ(channel.recvInt(), 0);
  EXPECT_TRUE(otherContext.payloadIs(0)) << "a peer wrote into memory registered by another Context";
  EXPECT_TRUE(otherContext.canariesIntact());
  channel.send({});
  EXPECT_EQ(p.wait(), 0);

  // Memory registered without Ethernet, over a fresh connection.
  Peer q([](Channel& channel) { writeWhatIsSent(channel, 256); });
  Connection second = connectOver(q.channel(), context);
  std::vector<char> claim = plainMem.serialize();
  // The peer lies about the transports: bit Ethernet set in the flags (offset 32).
  uint64_t flags = 0;
  std::memcpy(&flags, claim.data() + 32, 8);
  flags |= 1ULL << static_cast<int>(Transport::Ethernet);
  std::memcpy(claim.data() + 32, &flags, 8);
  q.channel().send(claim);
  EXPECT_EQ(q.channel().recvInt(), 0);
  EXPECT_TRUE(notForEthernet.payloadIs(0)) << "a peer wrote into memory not registered for Ethernet";
  EXPECT_TRUE(notForEthernet.canariesIntact());
  q.channel().send({});
  EXPECT_EQ(q.wait(), 0);
}

// ---- a misaligned 8-byte update is refused by the receiver ----

TEST(HostilePeerTest, AMisalignedUpdateIsRefusedByTheReceiver) {
  Peer p([](Channel& channel) {
    auto context = Context::create();
    Connection connection = connectOver(channel, context);
    std::vector<char> target = channel.recv();
    // Shift the destination by 4 bytes: the sender's own check sees offset 0, which is aligned.
    uint64_t ptr = 0, size = 8;
    std::memcpy(&ptr, target.data(), 8);
    ptr += 4;
    std::memcpy(target.data(), &ptr, 8);
    std::memcpy(target.data() + 8, &size, 8);
    RegisteredMemory dst = RegisteredMemory::deserialize(target);
    uint64_t src = 0;
    bool ok = true;
    try {
      connection.updateAndSync(dst, 0, &src, 0x1111111111111111ULL);
      connection.flush(5000000);
    } catch (const Error&) {
      ok = false;
    }
    channel.sendInt(ok ? 1 : 0);
  });
  auto context = Context::create();
  Connection connection = connectOver(p.channel(), context);
  Guarded word(16);
  std::fill(word.data(), word.data() + 16, 0);
  RegisteredMemory mem = context->registerMemory(word.data(), 16, Transport::Ethernet);
  p.channel().send(mem.serialize());
  EXPECT_EQ(p.channel().recvInt(), 0) << "the receiver accepted an update at a misaligned address";
  EXPECT_TRUE(word.payloadIs(0));
  EXPECT_TRUE(word.canariesIntact());
  EXPECT_EQ(p.wait(), 0);
}

// ---- deserialize refuses bytes that name this process's memory without a live registration ----

TEST(HostilePeerTest, DeserializeRefusesBytesNamingUnregisteredMemoryOfThisProcess) {
  auto context = Context::create();
  static std::vector<char> secret(64, 's');
  std::vector<char> probe(8);
  RegisteredMemory probeMem = context->registerMemory(probe.data(), probe.size(), Transport::Ethernet);
  Peer p([](Channel& channel) {
    // The peer learns this process's identity from a legitimate memory, then points it elsewhere.
    std::vector<char> bytes = channel.recv();
    uint64_t ptr = reinterpret_cast<uint64_t>(secret.data()), size = secret.size();
    std::memcpy(bytes.data(), &ptr, 8);
    std::memcpy(bytes.data() + 8, &size, 8);
    channel.send(bytes);
  });
  p.channel().send(probeMem.serialize());
  std::vector<char> forged = p.channel().recv();
  try {
    RegisteredMemory m = RegisteredMemory::deserialize(forged);
    ADD_FAILURE() << "deserialize returned " << m.data() << " for memory nobody registered";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << e.what();
  }
  // The same bytes for memory that is registered are fine; once deregistered they are refused.
  std::optional<RegisteredMemory> registered =
      context->registerMemory(secret.data(), secret.size(), Transport::Ethernet);
  EXPECT_EQ(RegisteredMemory::deserialize(forged).data(), secret.data());
  registered.reset();
  EXPECT_THROW(RegisteredMemory::deserialize(forged), Error);
  EXPECT_EQ(p.wait(), 0);
}

// ---- deregistration waits for, or fails, a write in flight ----

TEST(HostilePeerTest, NoByteLandsAfterDeregistrationWhileThePeerIsStoppedMidWrite) {
  constexpr size_t kBytes = 64 << 20;
  Peer p([](Channel& channel) { writeWhatIsSent(channel, kBytes); });
  auto context = Context::create();
  Connection connection = connectOver(p.channel(), context);
  Guarded target(kBytes);
  std::fill(target.data(), target.data() + kBytes, 0);
  std::optional<RegisteredMemory> mem = context->registerMemory(target.data(), kBytes, Transport::Ethernet);
  p.channel().send(mem->serialize());
  // Stop the peer as soon as its write has started landing: most of it is still to come.
  volatile char* first = target.data();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (*first == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(*first, 'x') << "the peer's write never started";
  p.signal(SIGSTOP);
  mem.reset();  // returns once no byte of the write can land any more
  const std::vector<char> afterDeregistration = target.bytes;
  p.signal(SIGCONT);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(target.bytes == afterDeregistration) << "bytes landed after the memory was deregistered";
  EXPECT_TRUE(target.canariesIntact());
  EXPECT_FALSE(target.payloadIs('x')) << "the whole write landed before the peer was stopped; nothing was tested";
  // The peer's write fails: its connection was closed.
  EXPECT_EQ(p.channel().recvInt(), 0);
  p.channel().send({});
  EXPECT_EQ(p.wait(), 0);
}

// ---- a write to a peer that stopped reading fails at its progress deadline; to a dead one at once ----

TEST(HostilePeerTest, AWriteToAStoppedPeerTimesOutAndLatchesAndToAKilledPeerFailsAtOnce) {
  const auto defaultLimit = ethernetWriteStallLimit();
  for (bool kill : {false, true}) {
    Peer p([](Channel& channel) {
      auto context = Context::create();
      Connection connection = connectOver(channel, context);
      std::vector<char> sink(64 << 20);
      RegisteredMemory mem = context->registerMemory(sink.data(), sink.size(), Transport::Ethernet);
      channel.send(mem.serialize());
      channel.recv(30s);
    });
    setEthernetWriteStallLimit(300ms);
    auto context = Context::create();
    Connection connection = connectOver(p.channel(), context);
    RegisteredMemory dst = RegisteredMemory::deserialize(p.channel().recv());
    std::vector<char> src(64 << 20, 'w');
    RegisteredMemory srcMem = context->registerMemory(src.data(), src.size(), Transport::Ethernet);
    p.signal(SIGSTOP);
    auto writer = std::async(std::launch::async, [&] {
      for (int i = 0; i < 100; ++i) connection.write(dst, 0, srcMem, 0, src.size());
    });
    if (kill) {
      std::this_thread::sleep_for(100ms);  // the write is blocked on the stopped peer by now
      p.signal(SIGKILL);
    }
    if (writer.wait_for(10s) != std::future_status::ready) {
      p.signal(SIGKILL);  // unblocks the write, so the test ends
      writer.wait();
      ADD_FAILURE() << "the write was still blocked 10 s after the peer " << (kill ? "died" : "stopped");
    } else {
      try {
        writer.get();
        ADD_FAILURE() << "writing 6.4 GB into a stopped peer succeeded";
      } catch (const Error& e) {
        EXPECT_EQ(e.getErrorCode(), kill ? ErrorCode::Aborted : ErrorCode::Timeout) << e.what();
      }
      // Latched: the connection stays failed.
      EXPECT_THROW(connection.write(dst, 0, srcMem, 0, 8), Error);
    }
    p.signal(SIGKILL);
  }
  setEthernetWriteStallLimit(defaultLimit);
}

// ---- a host wait without a limit ends soon after the peer dies ----

TEST(HostilePeerTest, AnUnlimitedHostWaitFailsWithAbortedWhenThePeerIsKilled) {
  Peer p([](Channel& channel) {
    auto context = Context::create();
    Connection connection = connectOver(channel, context);
    SemaphoreStub stub(connection);
    channel.send(stub.serialize());
    channel.recv(30s);  // holds the connection until killed
  });
  auto context = Context::create();
  Connection connection = connectOver(p.channel(), context);
  SemaphoreStub local(connection);
  Semaphore semaphore(local, SemaphoreStub::deserialize(p.channel().recv()));
  Host2HostSemaphore host(semaphore);
  auto waiter = std::async(std::launch::async, [&] { host.wait(-1); });
  std::this_thread::sleep_for(100ms);
  p.signal(SIGKILL);
  if (waiter.wait_for(10s) != std::future_status::ready) {
    // Release the wait by hand so that the test ends.
    atomicStore<uint64_t>(static_cast<uint64_t*>(semaphore.localMemory().data()), 1, memoryOrderSeqCst);
    waiter.wait();
    FAIL() << "wait(-1) was still blocked 10 s after the peer died";
  }
  try {
    waiter.get();
    FAIL() << "wait(-1) returned without a signal";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::Aborted) << e.what();
  }
}

// ---- idle and flooding connections to an Ethernet listener ----

namespace {

SocketAddress ethernetAddressOf(const Endpoint& endpoint) {
  return static_cast<const EthernetEndpoint&>(*EndpointAccess::impl(endpoint)->transportData).address();
}

}  // namespace

TEST(HostilePeerTest, IdleConnectionsToAnEthernetListenerDoNotDelayARealPeer) {
  Peer p([](Channel& channel) {
    SocketAddress target;
    std::vector<char> bytes = channel.recv();
    std::memcpy(&target, bytes.data(), sizeof(target));
    std::vector<TcpSocket> idle;
    for (int i = 0; i < 3; ++i) idle.push_back(TcpSocket::connect(target, Deadline::after(5s), "idle client"));
    channel.sendInt(1);
    auto context = Context::create();
    Connection connection = connectOver(channel, context);
    connection.flush(10000000);
    // Were the idle connections still open when the real one completed?
    int open = 0;
    for (auto& s : idle) {
      pollfd pfd{s.fd(), POLLIN, 0};
      if (::poll(&pfd, 1, 0) == 0) ++open;
    }
    channel.sendInt(open);
    channel.recv();  // keeps the connection until this side's flush has been answered too
  });
  auto context = Context::create();
  Endpoint local = context->createEndpoint(kHostEthernet);
  SocketAddress address = ethernetAddressOf(local);
  p.channel().send(
      std::vector<char>(reinterpret_cast<char*>(&address), reinterpret_cast<char*>(&address) + sizeof(address)));
  ASSERT_EQ(p.channel().recvInt(), 1);
  p.channel().send(local.serialize());
  Endpoint remote = Endpoint::deserialize(p.channel().recv());
  Connection connection = context->connect(local, remote);
  connection.flush(10000000);
  EXPECT_EQ(p.channel().recvInt(20s), 3) << "the real peer was served only after idle connections were dropped";
  p.channel().send({});
  EXPECT_EQ(p.wait(), 0);
}

TEST(HostilePeerTest, HellosWithUnknownNoncesAreCapped) {
  constexpr int kFlood = 300;
  Peer p([](Channel& channel) {
    SocketAddress target;
    std::vector<char> bytes = channel.recv();
    std::memcpy(&target, bytes.data(), sizeof(target));
    std::vector<TcpSocket> flood;
    for (int i = 0; i < kFlood; ++i) {
      flood.push_back(TcpSocket::connect(target, Deadline::after(5s), "flood client"));
      EthernetHello hello{kEthernetMagic, 0x1000u + i};
      flood.back().sendAll(&hello, sizeof(hello), Deadline::after(5s));
    }
    std::this_thread::sleep_for(500ms);
    int closed = 0;
    for (auto& s : flood) {
      pollfd pfd{s.fd(), POLLIN, 0};
      char c;
      if (::poll(&pfd, 1, 0) == 1 && ::recv(s.fd(), &c, 1, MSG_DONTWAIT) <= 0) ++closed;
    }
    channel.sendInt(closed);
  });
  auto context = Context::create();
  Endpoint local = context->createEndpoint(kHostEthernet);
  // A connection to a peer that never connects back keeps this listener accepting.
  auto other = Context::create();
  Endpoint absent = other->createEndpoint(kHostEthernet);
  const int fdsBefore = test::openFdCount();
  Connection waiting = context->connect(local, absent);
  SocketAddress address = ethernetAddressOf(local);
  p.channel().send(
      std::vector<char>(reinterpret_cast<char*>(&address), reinterpret_cast<char*>(&address) + sizeof(address)));
  const int64_t closed = p.channel().recvInt(30s);
  EXPECT_GE(closed, kFlood - static_cast<int64_t>(EthernetListener::kMaxUnclaimed));
  EXPECT_LE(test::openFdCount() - fdsBefore, static_cast<int>(EthernetListener::kMaxUnclaimed) + 8);
  EXPECT_EQ(p.wait(), 0);
}

// ---- the same into GPU memory: the receiver's copies are finished before deregistration returns ----

TEST(HostilePeerTest, NoByteLandsInGpuMemoryAfterDeregistrationWhileThePeerIsStoppedMidWrite) {
  constexpr size_t kBytes = 64 << 20, kPad = 4096;
  // The peer is forked before this process touches the GPU.
  Peer p([](Channel& channel) { writeWhatIsSent(channel, kBytes); });
  MSCCLPP_REQUIRE_GPU();
  auto context = Context::create();
  Connection connection = connectOver(p.channel(), context);
  char* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, kBytes + 2 * kPad), cudaSuccess);
  ASSERT_EQ(cudaMemset(device, kCanary, kBytes + 2 * kPad), cudaSuccess);
  ASSERT_EQ(cudaMemset(device + kPad, 0, kBytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto snapshot = [&] {
    std::vector<char> host(kBytes + 2 * kPad);
    EXPECT_EQ(cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  };
  std::optional<RegisteredMemory> mem = context->registerMemory(device + kPad, kBytes, Transport::Ethernet);
  p.channel().send(mem->serialize());
  char first = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (first == 0 && std::chrono::steady_clock::now() < deadline) {
    ASSERT_EQ(cudaMemcpy(&first, device + kPad, 1, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  ASSERT_EQ(first, 'x') << "the peer's write never started";
  p.signal(SIGSTOP);
  mem.reset();
  const std::vector<char> afterDeregistration = snapshot();
  p.signal(SIGCONT);
  std::this_thread::sleep_for(300ms);
  const std::vector<char> later = snapshot();
  EXPECT_TRUE(later == afterDeregistration) << "bytes landed in GPU memory after it was deregistered";
  for (size_t i = 0; i < kPad; ++i) {
    ASSERT_EQ(later[i], kCanary) << "canary before the range, byte " << i;
    ASSERT_EQ(later[kPad + kBytes + i], kCanary) << "canary after the range, byte " << i;
  }
  EXPECT_EQ(p.channel().recvInt(), 0);
  p.channel().send({});
  EXPECT_EQ(p.wait(), 0);
  cudaFree(device);
}
