// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What only IB promises, across real processes (mpirun) with host memory, over the SUBSTITUTE verbs
// provider that ctest loads through MSCCLPP_IBV_SO (test/ib_substitute/ibv_substitute.cc): no RDMA
// hardware is involved. Even ranks use IB0, odd ranks IB1, so connections also join different devices.
// What every transport promises (writes of every size, flush, updateAndSync offsets, range checks, a
// dead peer, repeated setups) the conformance suite checks for IB too (transport_conformance_test.cu).

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/semaphore.hpp>
#include <thread>
#include <vector>

#include "ib_substitute/ib_test_util.hpp"
#include "mp_unit/mp_test.hpp"

using namespace mscclpp;

namespace {

/// A buffer of `bytes` holding a pattern of `seed`, written a word at a time.
class PatternBuffer {
 public:
  PatternBuffer(size_t bytes, uint32_t seed) : bytes_(bytes), words_(new uint64_t[(bytes + 7) / 8]) {
    const uint64_t salt = seed * 0xbf58476d1ce4e5b9ull;
    for (size_t j = 0; j < (bytes + 7) / 8; ++j) words_[j] = (j + 1) * 0x9e3779b97f4a7c15ull ^ salt;
  }
  uint8_t* data() const { return reinterpret_cast<uint8_t*>(words_.get()); }
  size_t size() const { return bytes_; }

 private:
  size_t bytes_;
  std::unique_ptr<uint64_t[]> words_;
};

/// The first offset at which [a, a+n) and [b, b+n) differ, or n.
size_t firstDifference(const uint8_t* a, const uint8_t* b, size_t n) {
  if (std::memcmp(a, b, n) == 0) return n;
  return static_cast<size_t>(std::mismatch(a, a + n, b).first - a);
}

class IbSubstituteMpTest : public test::MultiProcessTest {
 protected:
  void SetUp() override {
    MultiProcessTest::SetUp();
    if (anyRank(!test::ibSubstituteLoaded())) {
      GTEST_SKIP() << "needs the substitute verbs provider in MSCCLPP_IBV_SO on every rank (set by ctest)";
    }
    next = (rank + 1) % nRanks;
    prev = (rank + nRanks - 1) % nRanks;
  }
  Transport ownTransport() const { return rank % 2 == 0 ? Transport::IB0 : Transport::IB1; }
  EndpointConfig hostConfig() const { return {ownTransport(), DeviceType::CPU}; }

  int next = 0;
  int prev = 0;
};

}  // namespace

TEST_F(IbSubstituteMpTest, AWaiterThatSeesTheTokenSeesEveryWriteBeforeIt) {
  auto bootstrap = makeBootstrap();
  Communicator comm(bootstrap);
  constexpr int kRounds = 200;
  constexpr size_t kSlot = 4096 + 8;
  PatternBuffer src(kRounds * kSlot, rank + 1), expected(kRounds * kSlot, prev + 1);
  std::vector<uint8_t> inbox(kRounds * kSlot, 0);
  uint64_t token = 0, counter = 0;
  RegisteredMemory srcMem = comm.registerMemory(src.data(), src.size(), ownTransport());
  RegisteredMemory inboxMem = comm.registerMemory(inbox.data(), inbox.size(), ownTransport());
  RegisteredMemory tokenMem = comm.registerMemory(&token, sizeof(token), ownTransport());
  auto toNext = comm.connect(hostConfig(), next, 10 + rank);
  auto fromPrev = comm.connect(hostConfig(), prev, 10 + prev);
  comm.sendMemory(inboxMem, prev, 20);
  comm.sendMemory(tokenMem, prev, 21);
  RegisteredMemory nextInbox = comm.recvMemory(next, 20).get();
  RegisteredMemory nextToken = comm.recvMemory(next, 21).get();
  Connection connection = toNext.get();
  fromPrev.get();
  bootstrap->barrier();
  std::thread sender([&] {
    for (int r = 0; r < kRounds; ++r) {
      connection.write(nextInbox, r * kSlot, srcMem, r * kSlot, kSlot);
      connection.updateAndSync(nextToken, 0, &counter, r + 1);
    }
    connection.flush();
  });
  // Whatever round the token names, that round's slot and all before it are complete.
  uint64_t seen = 0;
  size_t bad = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen < kRounds && std::chrono::steady_clock::now() < deadline) {
    uint64_t now = atomicLoad(&token, memoryOrderAcquire);
    for (; seen < now; ++seen) {
      bad += firstDifference(&inbox[seen * kSlot], expected.data() + seen * kSlot, kSlot) != kSlot;
    }
  }
  sender.join();
  EXPECT_EQ(seen, static_cast<uint64_t>(kRounds));
  EXPECT_EQ(bad, 0u) << "slots incomplete when their token was seen";
  EXPECT_EQ(counter, static_cast<uint64_t>(kRounds));
  bootstrap->barrier();
}

TEST_F(IbSubstituteMpTest, AQpInErrorFailsItsOwnFlushWithSystemErrorAndThePeersWritesIntoItWithAborted) {
  auto bootstrap = makeBootstrap();
  Communicator comm(bootstrap);
  std::vector<uint8_t> buffer(1 << 16, 1);
  RegisteredMemory mem = comm.registerMemory(buffer.data(), buffer.size(), ownTransport());
  auto toNext = comm.connect(hostConfig(), next, 10 + rank);
  auto fromPrev = comm.connect(hostConfig(), prev, 10 + prev);
  comm.sendMemory(mem, prev, 20);
  RegisteredMemory nextMem = comm.recvMemory(next, 20).get();
  Connection connection = toNext.get();
  fromPrev.get();
  connection.write(nextMem, 0, mem, 0, buffer.size());
  connection.flush();
  bootstrap->barrier();
  // Rank 0's QPs go to ERR: its own writes are flushed, and its peer's writes into it go unanswered.
  if (rank == 0) test::ibSubstituteInject("qp-error");
  bootstrap->barrier();
  // Rank 0's own work requests are flushed (a local error); its peer's go unanswered, which is how a
  // vanished peer looks from the writer's side.
  const bool failed = rank == 0 || next == 0;
  if (failed) {
    connection.write(nextMem, 0, mem, 0, buffer.size());
    bool matched = false;
    const ErrorCode code = rank == 0 ? ErrorCode::SystemError : ErrorCode::Aborted;
    std::string what = test::errorOf([&] { connection.flush(30 * 1000 * 1000); }, code, &matched);
    EXPECT_TRUE(matched) << what;
    EXPECT_NE(what.find(rank == 0 ? "Flushed" : "transport retry counter exceeded"), std::string::npos) << what;
  } else {
    connection.write(nextMem, 0, mem, 0, buffer.size());
    EXPECT_NO_THROW(connection.flush(30 * 1000 * 1000));
  }
  bootstrap->barrier();
}
