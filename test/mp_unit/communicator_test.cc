// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The Communicator, Ethernet connections and host semaphores across real processes (mpirun).

#include <mpi.h>

#include <cstring>
#include <mscclpp/semaphore.hpp>
#include <numeric>

#include "mp_unit/mp_test.hpp"
#include "mp_unit/mpi_bootstrap.hpp"

using namespace mscclpp;
using mscclpp::test::MpiBootstrap;

namespace {

const EndpointConfig kHostEthernet{Transport::Ethernet, DeviceType::CPU};

class CommunicatorMpTest : public test::MultiProcessTest {};

/// Every rank writes its own pattern into a slot of every peer's buffer and signals; every rank then
/// checks all slots. Exercises all-pairs connections, memory exchange and semaphores at once.
void allPairsExchange(Communicator& comm, int rank, int nRanks, size_t slotBytes) {
  std::vector<uint32_t> buffer(nRanks * slotBytes / sizeof(uint32_t), 0);
  const size_t slotWords = slotBytes / sizeof(uint32_t);
  for (size_t i = 0; i < slotWords; ++i) buffer[rank * slotWords + i] = rank * 1000003u + i;
  RegisteredMemory local = comm.registerMemory(buffer.data(), buffer.size() * 4, Transport::Ethernet);
  std::vector<std::shared_future<RegisteredMemory>> remotes(nRanks);
  std::vector<std::shared_future<Connection>> connections(nRanks);
  for (int peer = 0; peer < nRanks; ++peer) {
    if (peer == rank) continue;
    comm.sendMemory(local, peer);
    remotes[peer] = comm.recvMemory(peer);
    connections[peer] = comm.connect(kHostEthernet, peer);
  }
  std::vector<std::unique_ptr<Host2HostSemaphore>> semaphores(nRanks);
  for (int peer = 0; peer < nRanks; ++peer) {
    if (peer == rank) continue;
    semaphores[peer] = std::make_unique<Host2HostSemaphore>(comm, connections[peer].get());
  }
  for (int peer = 0; peer < nRanks; ++peer) {
    if (peer == rank) continue;
    Connection connection = connections[peer].get();
    connection.write(remotes[peer].get(), rank * slotBytes, local, rank * slotBytes, slotBytes);
    semaphores[peer]->signal();
  }
  for (int peer = 0; peer < nRanks; ++peer) {
    if (peer == rank) continue;
    semaphores[peer]->wait();
  }
  for (int src = 0; src < nRanks; ++src) {
    for (size_t i = 0; i < slotWords; ++i) {
      ASSERT_EQ(buffer[src * slotWords + i], src * 1000003u + i) << "slot of rank " << src << " word " << i;
    }
  }
}

}  // namespace

TEST_F(CommunicatorMpTest, AllPairsEthernetExchangeOfHostMemory) {
  auto bootstrap = makeBootstrap();
  Communicator comm(bootstrap);
  allPairsExchange(comm, rank, nRanks, 1 << 20);
  bootstrap->barrier();
}

TEST_F(CommunicatorMpTest, WorksOverAUserWrittenBootstrap) {
  auto bootstrap = std::make_shared<MpiBootstrap>();
  Communicator comm(bootstrap);
  allPairsExchange(comm, rank, nRanks, 4096);
  bootstrap->barrier();
}

TEST_F(CommunicatorMpTest, ReceivesMatchSendsInOrderAcrossProcesses) {
  auto bootstrap = makeBootstrap();
  Communicator comm(bootstrap);
  const int next = (rank + 1) % nRanks, prev = (rank + nRanks - 1) % nRanks;
  std::vector<std::vector<char>> buffers;
  for (int i = 0; i < 5; ++i) buffers.emplace_back(100 + i);
  for (auto& b : buffers) comm.sendMemory(comm.registerMemory(b.data(), b.size(), Transport::Ethernet), next, 3);
  std::vector<std::shared_future<RegisteredMemory>> futures;
  for (int i = 0; i < 5; ++i) futures.push_back(comm.recvMemory(prev, 3));
  for (int i = 4; i >= 0; --i) EXPECT_EQ(futures[i].get().size(), 100u + i);
  // Memory of another process is described, not mapped, over Ethernet.
  EXPECT_EQ(futures[0].get().data(), nullptr);
  bootstrap->barrier();
}
