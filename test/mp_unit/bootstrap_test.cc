// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// TcpBootstrap between real processes (one per MPI rank), and Bootstrap's non-virtual helpers over a
// user-written subclass. MPI only carries ids and addresses here; every check goes through the
// bootstrap under test.

#include <mpi.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "common/process_stats.hpp"
#include "mp_unit/mp_test.hpp"
#include "mp_unit/mpi_bootstrap.hpp"

using namespace mscclpp;
using mscclpp::test::MpiBootstrap;

namespace {

class BootstrapTest : public mscclpp::test::MultiProcessTest {
 protected:
  int next() const { return (rank + 1) % nRanks; }
  int prev() const { return (rank - 1 + nRanks) % nRanks; }

  /// A string chosen by rank 0 and known to every rank.
  std::string shared(const std::string& value) {
    std::array<char, 256> buf{};
    if (rank == 0) std::snprintf(buf.data(), buf.size(), "%s", value.c_str());
    MPI_Bcast(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
    return buf.data();
  }

  /// "ip:port" of a port that was free a moment ago on this host's bootstrap interface.
  std::string freeRootAddress() {
    std::string text;
    if (rank == 0) {
      TcpListener probe = TcpListener::listen(localInterfaceAddress());
      text = toString(probe.address());
    }
    return shared(text);
  }
};

ErrorCode errorCodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.getErrorCode();
  }
  ADD_FAILURE() << "expected an Error";
  return ErrorCode::InternalError;
}

std::vector<char> pattern(size_t bytes, int seed) {
  std::vector<char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return v;
}

}  // namespace

TEST_F(BootstrapTest, AllGatherCollectsEverySlot) {
  auto bootstrap = makeBootstrap();
  EXPECT_EQ(bootstrap->getRank(), rank);
  EXPECT_EQ(bootstrap->getNranks(), nRanks);
  for (int size : {4, 1000, 64 * 1024}) {
    std::vector<char> all(size_t(size) * nRanks, 0);
    auto mine = pattern(size, rank);
    std::memcpy(all.data() + size_t(size) * rank, mine.data(), size);
    bootstrap->allGather(all.data(), size);
    for (int r = 0; r < nRanks; ++r) {
      EXPECT_EQ(std::vector<char>(all.begin() + size_t(size) * r, all.begin() + size_t(size) * (r + 1)),
                pattern(size, r))
          << "slot " << r << ", " << size << " bytes";
    }
  }
}

TEST_F(BootstrapTest, BarrierWaitsForEveryRank) {
  auto bootstrap = makeBootstrap();
  const std::string path = shared("/tmp/mscclpp_barrier_test_" + std::to_string(getpid()));
  for (int round = 0; round < 3; ++round) {
    const std::string marker = path + "_" + std::to_string(round);
    if (rank == 0) {
      // Rank 0 arrives late and leaves a mark first; nobody may pass the barrier before seeing it.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::ofstream(marker) << "here";
    }
    bootstrap->barrier();
    EXPECT_EQ(access(marker.c_str(), F_OK), 0) << "rank " << rank << " passed the barrier before rank 0 entered";
    bootstrap->barrier();
    if (rank == 0) std::remove(marker.c_str());
  }
}

TEST_F(BootstrapTest, SendRecvKeepsOrderPerTagAcrossInterleavedTags) {
  auto bootstrap = makeBootstrap();
  const int kTags = 4, kMessages = 5;
  for (int peer = 0; peer < nRanks; ++peer) {
    if (peer == rank) continue;
    for (int m = 0; m < kMessages; ++m) {
      for (int tag = 0; tag < kTags; ++tag) {
        int64_t value = int64_t(rank) * 1000000 + tag * 1000 + m;
        bootstrap->send(&value, sizeof(value), peer, tag);
      }
    }
  }
  // Tags are drained in the opposite order they were sent in: each must still be FIFO on its own.
  for (int peer = 0; peer < nRanks; ++peer) {
    if (peer == rank) continue;
    for (int tag = kTags - 1; tag >= 0; --tag) {
      for (int m = 0; m < kMessages; ++m) {
        int64_t value = -1;
        bootstrap->recv(&value, sizeof(value), peer, tag);
        EXPECT_EQ(value, int64_t(peer) * 1000000 + tag * 1000 + m) << "from " << peer << " tag " << tag;
      }
    }
  }
  bootstrap->barrier();
}

TEST_F(BootstrapTest, VectorSendRecvResizesIncludingEmptyAndLarge) {
  auto bootstrap = makeBootstrap();
  if (nRanks == 1) GTEST_SKIP() << "needs two ranks";
  for (size_t bytes : {size_t(0), size_t(1), size_t(4097), size_t(64) << 20}) {
    auto out = pattern(bytes, rank);
    std::vector<char> in(3, 'x');
    // A message larger than the socket buffers needs the receiver running, so send from a thread.
    std::thread sender([&] { bootstrap->send(out, next(), 7); });
    bootstrap->recv(in, prev(), 7);
    sender.join();
    EXPECT_EQ(in.size(), bytes);
    EXPECT_TRUE(in == pattern(bytes, prev())) << bytes << " bytes";
  }
  bootstrap->barrier();
}

TEST_F(BootstrapTest, LargeRawMessageArrivesWhole) {
  auto bootstrap = makeBootstrap();
  if (nRanks == 1) GTEST_SKIP() << "needs two ranks";
  const size_t bytes = size_t(256) << 20;
  if (rank == 0) {
    auto out = pattern(bytes, 3);
    bootstrap->send(out.data(), static_cast<int>(bytes), 1, 11);
  } else if (rank == 1) {
    std::vector<char> in(bytes);
    bootstrap->recv(in.data(), static_cast<int>(bytes), 0, 11);
    EXPECT_TRUE(in == pattern(bytes, 3));
  }
  bootstrap->barrier();
}

TEST_F(BootstrapTest, ShorterMessageIsAcceptedLongerIsRejected) {
  auto bootstrap = makeBootstrap();
  if (nRanks == 1) GTEST_SKIP() << "needs two ranks";
  if (rank == 0) {
    char small[4] = {1, 2, 3, 4};
    char big[100] = {};
    int after = 42;
    bootstrap->send(small, sizeof(small), 1, 3);
    bootstrap->send(big, sizeof(big), 1, 3);
    bootstrap->send(&after, sizeof(after), 1, 3);
  } else if (rank == 1) {
    char buf[10] = {};
    bootstrap->recv(buf, sizeof(buf), 0, 3);
    EXPECT_EQ(buf[3], 4);
    EXPECT_EQ(errorCodeOf([&] { bootstrap->recv(buf, sizeof(buf), 0, 3); }), ErrorCode::InvalidUsage);
    // The oversized message was consumed, so the stream is still in step.
    int after = 0;
    bootstrap->recv(&after, sizeof(after), 0, 3);
    EXPECT_EQ(after, 42);
  }
  bootstrap->barrier();
}

TEST_F(BootstrapTest, BroadcastFromEveryRoot) {
  auto bootstrap = makeBootstrap();
  for (int root = 0; root < nRanks; ++root) {
    for (size_t bytes : {size_t(8), size_t(1) << 20}) {
      std::vector<char> data = rank == root ? pattern(bytes, root) : std::vector<char>(bytes, 0);
      bootstrap->broadcast(data.data(), static_cast<int>(bytes), root);
      EXPECT_TRUE(data == pattern(bytes, root)) << "root " << root << ", " << bytes << " bytes";
    }
  }
}

TEST_F(BootstrapTest, GroupBarrierOfASubset) {
  auto bootstrap = makeBootstrap();
  // Even and odd ranks synchronise separately, at the same time.
  std::vector<int> group;
  for (int r = rank % 2; r < nRanks; r += 2) group.push_back(r);
  for (int i = 0; i < 3; ++i) bootstrap->groupBarrier(group);
  // The first and the last rank only.
  if (rank == 0 || rank == nRanks - 1)
    bootstrap->groupBarrier(nRanks == 1 ? std::vector<int>{0} : std::vector<int>{nRanks - 1, 0});
  bootstrap->barrier();
}

TEST_F(BootstrapTest, GroupBarrierRejectsBadGroups) {
  auto bootstrap = makeBootstrap();
  EXPECT_EQ(errorCodeOf([&] { bootstrap->groupBarrier({rank, rank}); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { bootstrap->groupBarrier({rank, nRanks}); }), ErrorCode::InvalidUsage);
  if (nRanks > 1) EXPECT_EQ(errorCodeOf([&] { bootstrap->groupBarrier({next()}); }), ErrorCode::InvalidUsage);
  bootstrap->barrier();
}

TEST_F(BootstrapTest, AllRanksOfThisHostAreCountedPerNode) {
  auto bootstrap = makeBootstrap();
  EXPECT_EQ(bootstrap->getNranksPerNode(), nRanks);
}

TEST_F(BootstrapTest, BadArgumentsAreInvalidUsage) {
  auto bootstrap = makeBootstrap();
  int value = 0;
  EXPECT_EQ(errorCodeOf([&] { bootstrap->send(&value, 4, nRanks, 0); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { bootstrap->recv(&value, 4, -1, 0); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { bootstrap->send(&value, -4, next(), 0); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { bootstrap->broadcast(&value, 4, nRanks); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { bootstrap->initialize(bootstrap->getUniqueId(), 5); }), ErrorCode::InvalidUsage);
  // Invalid usage leaves the bootstrap working.
  bootstrap->barrier();
  EXPECT_EQ(errorCodeOf([] { TcpBootstrap(2, 2); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([] { TcpBootstrap(0, 0); }), ErrorCode::InvalidUsage);
  TcpBootstrap uninitialized(0, 1);
  EXPECT_EQ(errorCodeOf([&] { uninitialized.barrier(); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { uninitialized.getUniqueId(); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { uninitialized.initialize("10.0.0.1:0", 1); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { TcpBootstrap(0, 1).initialize("not an address", 1); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(errorCodeOf([&] { TcpBootstrap(0, 1).initialize(UniqueId{}, 1); }), ErrorCode::InvalidUsage);
}

TEST_F(BootstrapTest, InitializesFromAnIpPortString) {
  const std::string root = freeRootAddress();
  auto bootstrap = std::make_shared<TcpBootstrap>(rank, nRanks);
  bootstrap->initialize(root, 30);
  std::vector<int> all(nRanks);
  all[rank] = rank + 1;
  bootstrap->allGather(all.data(), sizeof(int));
  for (int r = 0; r < nRanks; ++r) EXPECT_EQ(all[r], r + 1);
  EXPECT_EQ(bootstrap->getNranksPerNode(), nRanks);
}

TEST_F(BootstrapTest, InitializesFromAnInterfaceIpPortString) {
  // The interface name picks where this rank listens: loopback here, so every connection stays on lo.
  std::string root;
  if (rank == 0) {
    TcpListener probe = TcpListener::listen(parseSocketAddress("127.0.0.1:0"));
    root = "lo:" + toString(probe.address());
  }
  root = shared(root);
  auto bootstrap = std::make_shared<TcpBootstrap>(rank, nRanks);
  bootstrap->initialize(root, 30);
  bootstrap->barrier();
  int token = rank == 0 ? 99 : 0;
  bootstrap->broadcast(&token, sizeof(token), 0);
  EXPECT_EQ(token, 99);
}

TEST_F(BootstrapTest, ConcurrentTagsFromSeveralThreads) {
  auto bootstrap = makeBootstrap();
  if (nRanks == 1) GTEST_SKIP() << "needs two ranks";
  const int kThreads = 4, kRounds = 50;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int tag = 100 + t;
      for (int i = 0; i < kRounds; ++i) {
        int64_t out = int64_t(rank) << 32 | int64_t(t) << 16 | i, in = -1;
        bootstrap->send(&out, sizeof(out), next(), tag);
        bootstrap->recv(&in, sizeof(in), prev(), tag);
        if (in != (int64_t(prev()) << 32 | int64_t(t) << 16 | i)) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  bootstrap->barrier();
}

TEST_F(BootstrapTest, RepeatedCreateDestroyLeavesNoFdsOrThreads) {
  auto cycle = [&] {
    auto bootstrap = makeBootstrap();
    bootstrap->barrier();
    if (nRanks > 1) {
      int value = rank;
      bootstrap->send(&value, sizeof(value), next(), 1);
      bootstrap->recv(&value, sizeof(value), prev(), 1);
    }
    bootstrap->barrier();
  };
  // The first cycle builds what lives for the whole process (logger, interface choice, MPI's links).
  cycle();
  MPI_Barrier(MPI_COMM_WORLD);
  const int fdsBefore = test::openFdCount();
  const std::set<int> threadsBefore = test::threadIds();
  for (int i = 0; i < 5; ++i) cycle();
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(test::openFdCount(), fdsBefore);
  EXPECT_TRUE(test::newThreads(threadsBefore).empty());
}

TEST_F(BootstrapTest, UserSubclassGetsGroupBarrierAndVectorMessages) {
  MpiBootstrap bootstrap;
  std::vector<int> all;
  for (int r = 0; r < nRanks; ++r) all.push_back(r);
  bootstrap.groupBarrier(all);
  if (nRanks == 1) return;
  // MPI sends of large messages wait for the receiver: even ranks send first, odd ranks receive first.
  for (size_t bytes : {size_t(0), size_t(5), size_t(1) << 20}) {
    auto out = pattern(bytes, rank);
    std::vector<char> in;
    if (rank % 2 == 0) {
      bootstrap.send(out, next(), 2);
      bootstrap.recv(in, prev(), 2);
    } else {
      bootstrap.recv(in, prev(), 2);
      bootstrap.send(out, next(), 2);
    }
    EXPECT_TRUE(in == pattern(bytes, prev())) << bytes << " bytes";
  }
  if (rank < 2) bootstrap.groupBarrier({0, 1});
}

TEST_F(BootstrapTest, VectorRecvRefusesAnAbsurdLengthWithoutAllocating) {
  MpiBootstrap bootstrap;
  if (nRanks == 1) GTEST_SKIP() << "needs two ranks";
  if (rank == 0) {
    uint64_t bogus = uint64_t(1) << 40;  // what a mismatched send or corrupted bytes could announce
    bootstrap.send(&bogus, sizeof(bogus), 1, 5);
  } else if (rank == 1) {
    std::vector<char> in;
    EXPECT_EQ(errorCodeOf([&] { bootstrap.recv(in, 0, 5); }), ErrorCode::InvalidUsage);
    EXPECT_TRUE(in.empty());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
