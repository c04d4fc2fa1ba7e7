// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The Communicator, Context, Ethernet connections and host semaphores, with ranks as threads of this
// process (ThreadBootstrap). The same behaviours across real processes are in test/mp_unit/.

#include <gtest/gtest.h>

#include <cstring>
#include <mscclpp/core.hpp>
#include <mscclpp/semaphore.hpp>
#include <numeric>
#include <optional>

#include "common/thread_bootstrap.hpp"

using namespace mscclpp;
using mscclpp::test::ThreadBootstrap;

namespace {

const EndpointConfig kHostEthernet{Transport::Ethernet, DeviceType::CPU};

void expectErrorCode(const std::function<void()>& fn, ErrorCode code, const std::string& fragment = "") {
  try {
    fn();
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), code) << e.what();
    if (!fragment.empty()) EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(CommunicatorTest, ReceivesMatchSendsInOrderEvenWhenWaitedOutOfOrder) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    std::vector<std::vector<char>> buffers(3, std::vector<char>(100 + bootstrap->getRank()));
    // Memory of this process is read back only while its registration lives.
    std::vector<RegisteredMemory> registrations;
    if (bootstrap->getRank() == 0) {
      for (auto& b : buffers) {
        registrations.push_back(comm.registerMemory(b.data(), b.size(), Transport::Ethernet));
        comm.sendMemory(registrations.back(), 1, 7);
      }
    } else {
      auto f0 = comm.recvMemory(0, 7);
      auto f1 = comm.recvMemory(0, 7);
      auto f2 = comm.recvMemory(0, 7);
      // Waiting on the last first still gives each future its own message.
      EXPECT_EQ(f2.get().size(), 100u);
      EXPECT_EQ(f0.get().size(), 100u);
      EXPECT_EQ(f1.get().size(), 100u);
      EXPECT_EQ(f0.get().transports(), TransportFlags(Transport::Ethernet));
    }
    bootstrap->barrier();
  });
}

TEST(CommunicatorTest, DifferentTagsAreIndependentStreams) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    std::vector<char> a(11), b(22);
    RegisteredMemory ra = comm.registerMemory(a.data(), a.size(), Transport::Ethernet);
    RegisteredMemory rb = comm.registerMemory(b.data(), b.size(), Transport::Ethernet);
    if (bootstrap->getRank() == 0) {
      comm.sendMemory(ra, 1, 1);
      comm.sendMemory(rb, 1, 2);
    } else {
      auto onTag2 = comm.recvMemory(0, 2);
      auto onTag1 = comm.recvMemory(0, 1);
      EXPECT_EQ(onTag2.get().size(), 22u);
      EXPECT_EQ(onTag1.get().size(), 11u);
    }
    bootstrap->barrier();
  });
}

TEST(CommunicatorTest, MemoryOfTheSameProcessIsUsedDirectly) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    static std::vector<char> shared(64);
    RegisteredMemory mine;
    if (bootstrap->getRank() == 0) {
      mine = comm.registerMemory(shared.data(), shared.size(), Transport::Ethernet);
      comm.sendMemory(mine, 1);
    } else {
      RegisteredMemory remote = comm.recvMemory(0).get();
      EXPECT_EQ(remote.originalDataPtr(), shared.data());
      EXPECT_EQ(remote.data(), shared.data());
    }
    bootstrap->barrier();
  });
}

TEST(CommunicatorTest, EthernetWriteAndSignalBetweenHostBuffers) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank(), peer = 1 - rank;
    Communicator comm(bootstrap);
    const size_t bytes = 1 << 20;
    std::vector<int> buffer(bytes / sizeof(int), -1);
    if (rank == 0) std::iota(buffer.begin(), buffer.end(), 0);
    RegisteredMemory local = comm.registerMemory(buffer.data(), bytes, Transport::Ethernet);
    comm.sendMemory(local, peer);
    auto remoteFuture = comm.recvMemory(peer);
    Connection connection = comm.connect(kHostEthernet, peer).get();
    EXPECT_EQ(comm.remoteRankOf(connection), peer);
    EXPECT_EQ(comm.tagOf(connection), 0);
    Host2HostSemaphore semaphore(comm, connection);
    RegisteredMemory remote = remoteFuture.get();
    if (rank == 0) {
      connection.write(remote, 0, local, 0, bytes);
      semaphore.signal();
    } else {
      semaphore.wait();
      for (size_t i = 0; i < buffer.size(); ++i) ASSERT_EQ(buffer[i], static_cast<int>(i)) << i;
    }
    // Both ranks are this process: a rank reads the other's memory (its semaphore token) back only
    // while the other still holds it.
    bootstrap->barrier();
  });
}

TEST(CommunicatorTest, HostSemaphorePingPongKeepsCountsConsistent) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank(), peer = 1 - rank;
    Communicator comm(bootstrap);
    Connection connection = comm.connect(kHostEthernet, peer).get();
    Host2HostSemaphore semaphore(comm, connection);
    for (int i = 0; i < 2000; ++i) {
      if ((i % 2) == rank) {
        semaphore.signal();
      } else {
        semaphore.wait();
      }
    }
    EXPECT_FALSE(semaphore.poll());
    bootstrap->barrier();
  });
}

TEST(CommunicatorTest, PollConsumesOneSignalAtATime) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank(), peer = 1 - rank;
    Communicator comm(bootstrap);
    Connection connection = comm.connect(kHostEthernet, peer).get();
    Host2HostSemaphore semaphore(comm, connection);
    if (rank == 0) {
      semaphore.signal();
      semaphore.signal();
      connection.flush();
    }
    bootstrap->barrier();
    if (rank == 1) {
      EXPECT_TRUE(semaphore.poll());
      EXPECT_TRUE(semaphore.poll());
      EXPECT_FALSE(semaphore.poll());
    }
  });
}

TEST(CommunicatorTest, WaitTimesOutAndCanBeRetried) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank(), peer = 1 - rank;
    Communicator comm(bootstrap);
    Connection connection = comm.connect(kHostEthernet, peer).get();
    Host2HostSemaphore semaphore(comm, connection);
    if (rank == 1) expectErrorCode([&] { semaphore.wait(1000); }, ErrorCode::Timeout, "no signal after 1000 checks");
    bootstrap->barrier();
    if (rank == 0) semaphore.signal();
    if (rank == 1) semaphore.wait();  // the timed-out wait consumed nothing
  });
}

// The communicator keeps nothing it handed out: a connection (and the semaphore over it) that the
// caller drops closes then, not when the communicator goes away, so the peer learns at once.
TEST(CommunicatorTest, ADroppedConnectionClosesWhileItsCommunicatorLives) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank(), peer = 1 - rank;
    Communicator comm(bootstrap);
    std::optional<Connection> connection = comm.connect(kHostEthernet, peer).get();
    std::optional<Host2HostSemaphore> semaphore;
    semaphore.emplace(comm, *connection);
    bootstrap->barrier();
    if (rank == 1) {
      semaphore.reset();
      connection.reset();
    } else {
      // 20,000,000 checks: 10 s, far longer than a closed socket takes to show.
      expectErrorCode([&] { semaphore->wait(20'000'000); }, ErrorCode::Aborted, "closed the connection");
    }
    bootstrap->barrier();
  });
}

TEST(CommunicatorTest, ConnectionToSelfDeliversLocally) {
  ThreadBootstrap::run(1, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    std::vector<char> src(1000, 'a'), dst(1000, 0);
    RegisteredMemory srcMem = comm.registerMemory(src.data(), src.size(), Transport::Ethernet);
    // Peers may write into memory only while its registration is alive: keep it.
    RegisteredMemory dstRegistration = comm.registerMemory(dst.data(), dst.size(), Transport::Ethernet);
    comm.sendMemory(dstRegistration, 0);
    RegisteredMemory dstMem = comm.recvMemory(0).get();
    Connection connection = comm.connect(kHostEthernet, 0).get();
    connection.write(dstMem, 0, srcMem, 0, src.size());
    connection.flush();
    EXPECT_EQ(dst, src);
  });
}

TEST(CommunicatorTest, WritesIntoMemoryNoLongerRegisteredAreRefused) {
  ThreadBootstrap::run(1, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    std::vector<char> src(64, 'a'), dst(64, 0);
    RegisteredMemory srcMem = comm.registerMemory(src.data(), src.size(), Transport::Ethernet);
    std::optional<RegisteredMemory> dstRegistration = comm.registerMemory(dst.data(), dst.size(), Transport::Ethernet);
    comm.sendMemory(*dstRegistration, 0);
    RegisteredMemory dstMem = comm.recvMemory(0).get();
    dstRegistration.reset();  // deregistered: the copy read back no longer names a valid target
    Connection connection = comm.connect(kHostEthernet, 0).get();
    connection.write(dstMem, 0, srcMem, 0, src.size());
    // The receiver refuses the write and closes the connection; the sender learns at its next call.
    EXPECT_THROW(connection.flush(), Error);
    EXPECT_EQ(dst, std::vector<char>(64, 0));
  });
}

TEST(CommunicatorTest, ReceiveFromSelfWithoutSendIsAnError) {
  ThreadBootstrap::run(1, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    auto future = comm.recvMemory(0, 3);
    expectErrorCode([&] { future.get(); }, ErrorCode::InvalidUsage, "no matching earlier send");
  });
}

TEST(CommunicatorTest, BadRanksAreRejected) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    std::vector<char> b(8);
    RegisteredMemory m = comm.registerMemory(b.data(), b.size(), Transport::Ethernet);
    expectErrorCode([&] { comm.sendMemory(m, 2); }, ErrorCode::InvalidUsage, "out of range");
    expectErrorCode([&] { comm.recvMemory(-1); }, ErrorCode::InvalidUsage, "out of range");
    expectErrorCode([&] { comm.connect(kHostEthernet, 5); }, ErrorCode::InvalidUsage, "out of range");
  });
}

TEST(CommunicatorTest, ForeignConnectionsHaveNoRank) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int peer = 1 - bootstrap->getRank();
    Communicator comm(bootstrap);
    Communicator other(bootstrap);
    Connection connection = other.connect(kHostEthernet, peer, 9).get();
    EXPECT_EQ(other.tagOf(connection), 9);
    EXPECT_THROW(comm.remoteRankOf(connection), std::out_of_range);
    EXPECT_THROW(comm.tagOf(Connection()), std::out_of_range);
    // connect() returns before the peer has connected back: keep the endpoint until both have.
    connection.flush();
    bootstrap->barrier();
  });
}

TEST(ConnectionTest, OutOfRangeAndUnregisteredWritesAreRejected) {
  ThreadBootstrap::run(2, [](std::shared_ptr<ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank(), peer = 1 - rank;
    Communicator comm(bootstrap);
    std::vector<char> buffer(4096);
    RegisteredMemory local = comm.registerMemory(buffer.data(), buffer.size(), Transport::Ethernet);
    RegisteredMemory noTransport = comm.registerMemory(buffer.data(), buffer.size(), NoTransports);
    comm.sendMemory(local, peer);
    RegisteredMemory remote = comm.recvMemory(peer).get();
    Connection connection = comm.connect(kHostEthernet, peer).get();
    expectErrorCode([&] { connection.write(remote, 4000, local, 0, 100); }, ErrorCode::InvalidUsage, "exceeds");
    expectErrorCode([&] { connection.write(remote, 0, local, 4090, 10); }, ErrorCode::InvalidUsage, "exceeds");
    expectErrorCode([&] { connection.write(remote, UINT64_MAX, local, 0, 2); }, ErrorCode::InvalidUsage, "exceeds");
    expectErrorCode([&] { connection.write(remote, 0, noTransport, 0, 8); }, ErrorCode::InvalidUsage, "not registered");
    uint64_t value = 0;
    expectErrorCode([&] { connection.updateAndSync(remote, 4092, &value, 1); }, ErrorCode::InvalidUsage, "exceeds");
    expectErrorCode([&] { connection.updateAndSync(remote, 4, &value, 1); }, ErrorCode::InvalidUsage, "aligned");
    expectErrorCode([&] { Connection().flush(); }, ErrorCode::InvalidUsage, "empty Connection");
    bootstrap->barrier();
  });
}

TEST(ContextTest, RegisterMemoryChecksItsArguments) {
  auto context = Context::create();
  int onHost = 0;
  expectErrorCode([&] { context->registerMemory(nullptr, 8, Transport::Ethernet); }, ErrorCode::InvalidUsage,
                  "null pointer");
  expectErrorCode([&] { context->registerMemory(&onHost, 4, Transport::CudaIpc); }, ErrorCode::InvalidUsage);
  expectErrorCode([&] { context->registerMemory(&onHost, 4, Transport::Unknown); }, ErrorCode::InvalidUsage);
  RegisteredMemory empty = context->registerMemory(nullptr, 0, NoTransports);
  EXPECT_EQ(empty.size(), 0u);
}

TEST(ContextTest, EndpointsOfDifferentTransportsDoNotConnect) {
  auto context = Context::create();
  Endpoint eth = context->createEndpoint(kHostEthernet);
  EXPECT_EQ(eth.transport(), Transport::Ethernet);
  EXPECT_EQ(eth.device().type, DeviceType::CPU);
  expectErrorCode([&] { context->createEndpoint({Transport::Unknown, DeviceType::CPU}); }, ErrorCode::InvalidUsage);
  auto other = Context::create();
  expectErrorCode([&] { other->connect(eth, eth); }, ErrorCode::InvalidUsage, "not created by this Context");
  expectErrorCode([&] { context->connect(Endpoint(), eth); }, ErrorCode::InvalidUsage, "empty Endpoint");
}
