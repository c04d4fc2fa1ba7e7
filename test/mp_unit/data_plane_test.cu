// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// GPU semaphores between real processes, and the order of data and tokens sent over Ethernet into GPU
// memory. Ranks work in pairs (0,1), (2,3), ...; with more ranks than GPUs the pair shares one GPU
// (under MPS), so "the peer's memory" is another process's allocation mapped through CUDA IPC, exactly
// as between two GPUs of a host. What every connection promises on its own (writes, flush,
// updateAndSync, range checks) is in transport_conformance_test.cu.

#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/semaphore.hpp>
#include <string>
#include <vector>

#include "mp_unit/data_plane_util.hpp"

using namespace mscclpp;
using namespace mscclpp::test;

namespace {

uint32_t sourceSeed(int rank, int round) { return 0x1000u + 977u * rank + 31u * round; }
uint32_t backgroundSeed(int rank, int round) { return 0x7000u + 613u * rank + 17u * round; }

// ---- kernels ----

/// What a waiting kernel leaves behind for the host to check.
struct SemaphoreCounts {
  uint64_t expected;
  uint64_t inbound;
  uint64_t outbound;
  uint64_t pollAfter;  // 1 if poll() found another signal after the last wait
  uint64_t errors;
};

__global__ void waitManyKernel(Host2DeviceSemaphoreDeviceHandle semaphore, uint64_t waits, SemaphoreCounts* out) {
  for (uint64_t i = 0; i < waits; ++i) semaphore.wait(kDeviceSpinLimit);
  out->expected = semaphore.loadExpectedInbound();
  out->inbound = semaphore.loadInbound();
  out->pollAfter = semaphore.poll() ? 1 : 0;
}

/// Polls until one signal is consumed (or the spin limit passes), then polls once more.
__global__ void pollOnceKernel(Host2DeviceSemaphoreDeviceHandle semaphore, SemaphoreCounts* out) {
  int64_t spins = 0;
  while (!semaphore.poll()) {
    if (++spins > kDeviceSpinLimit) {
      out->errors = 1;
      return;
    }
  }
  out->pollAfter = semaphore.poll() ? 1 : 0;
  out->expected = semaphore.loadExpectedInbound();
  out->inbound = semaphore.loadInbound();
}

/// Each received host signal is acknowledged in mapped host memory, which the host waits for.
__global__ void ackEachSignalKernel(Host2DeviceSemaphoreDeviceHandle semaphore, uint64_t rounds, uint64_t* ack,
                                    SemaphoreCounts* out) {
  for (uint64_t r = 1; r <= rounds; ++r) {
    semaphore.wait(kDeviceSpinLimit);
    atomicStore<uint64_t, scopeSystem>(ack, r, memoryOrderRelease);
  }
  out->expected = semaphore.loadExpectedInbound();
  out->inbound = semaphore.loadInbound();
  out->pollAfter = semaphore.poll() ? 1 : 0;
}

/// One thread per side. In round r the initiator stores a stamp into the peer's mailbox and signals,
/// the other side waits, checks the stamp, answers with its own and signals back. The relaxed form
/// moves no data (relaxed operations order nothing but the token) and checks only the counts.
template <bool Relaxed>
__global__ void memoryPingPongKernel(MemoryDevice2DeviceSemaphoreDeviceHandle semaphore, volatile uint32_t* mine,
                                     volatile uint32_t* peers, uint32_t rounds, bool initiator, uint32_t side,
                                     uint32_t peerSide, SemaphoreCounts* out) {
  uint64_t errors = 0;
  for (uint32_t r = 1; r <= rounds; ++r) {
    if (initiator) {
      if (Relaxed) {
        semaphore.relaxedSignal();
        semaphore.relaxedWait(kDeviceSpinLimit);
      } else {
        *peers = stamp(side, r, 0);
        semaphore.signal();
        semaphore.wait(kDeviceSpinLimit);
        if (*mine != stamp(peerSide, r, 0)) ++errors;
      }
    } else {
      if (Relaxed) {
        semaphore.relaxedWait(kDeviceSpinLimit);
        semaphore.relaxedSignal();
      } else {
        semaphore.wait(kDeviceSpinLimit);
        if (*mine != stamp(peerSide, r, 0)) ++errors;
        *peers = stamp(side, r, 0);
        semaphore.signal();
      }
    }
  }
  out->errors = errors;
  out->expected = semaphore.loadExpectedInbound();
  out->inbound = semaphore.loadInbound();
  out->outbound = semaphore.loadOutbound();
  out->pollAfter = semaphore.poll() ? 1 : 0;
}

/// One block: thread 0 consumes one host signal, then every thread checks [p, p+n) against `e`.
__global__ void waitThenCountKernel(Host2DeviceSemaphoreDeviceHandle semaphore, const uint8_t* p, uint64_t n,
                                    ExpectedBytes e, unsigned long long* bad, unsigned long long* firstBad) {
  if (threadIdx.x == 0) semaphore.wait(kDeviceSpinLimit);
  __syncthreads();
  countUnexpectedBytes(p, n, e, bad, firstBad, threadIdx.x, blockDim.x);
}

}  // namespace

class DataPlaneSemaphoreTest : public DataPlaneMpTest {};
class DataPlaneEthernetGpuTest : public DataPlaneMpTest {};

// ---- semaphores ----

TEST_F(DataPlaneSemaphoreTest, HostSignalsAreEachConsumedByOneDeviceWait) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  // Signals are sent back to back, so the waiter sees the token jump by many at a time; the counts
  // must still come out exact.
  constexpr uint64_t kSignals = 100000;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& results = allocate(2 * sizeof(SemaphoreCounts));
    SemaphoreCounts* counts = results.as<SemaphoreCounts>();
    Communicator comm(bootstrap);
    Connection conn = comm.connect(Transport::CudaIpc, peer).get();
    Host2DeviceSemaphore semaphore(comm, conn);
    waitManyKernel<<<1, 1, 0, stream>>>(semaphore.deviceHandle(), kSignals, counts);
    launched("waitManyKernel");
    bootstrap->barrier();  // both waiters are queued before the signals start
    for (uint64_t i = 0; i < kSignals; ++i) semaphore.signal();
    finish(stream, "waitManyKernel");
    SemaphoreCounts after = wordToHost(counts, stream);
    EXPECT_EQ(after.expected, kSignals);
    EXPECT_EQ(after.inbound, kSignals);
    EXPECT_EQ(after.pollAfter, 0u) << "no signal is left over after exactly as many waits";

    bootstrap->barrier();
    semaphore.signal();
    pollOnceKernel<<<1, 1, 0, stream>>>(semaphore.deviceHandle(), counts + 1);
    launched("pollOnceKernel");
    finish(stream, "pollOnceKernel");
    SemaphoreCounts polled = wordToHost(counts + 1, stream);
    EXPECT_EQ(polled.errors, 0u) << "poll() never saw the extra signal";
    EXPECT_EQ(polled.pollAfter, 0u) << "one signal satisfies one poll";
    EXPECT_EQ(polled.expected, kSignals + 1);
    EXPECT_EQ(polled.inbound, kSignals + 1);
  });
}

TEST_F(DataPlaneSemaphoreTest, HostToDevicePingPongKeepsCountsOnBothSides) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  // Each hop goes host -> copy engine -> peer kernel -> mapped host memory -> peer host, so a round
  // costs tens of microseconds; 10,000 rounds keep this test to well under a second or two.
  constexpr uint64_t kRounds = 10000;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& results = allocate(sizeof(SemaphoreCounts));
    MappedHostMemory<uint64_t> ack(1);
    Communicator comm(bootstrap);
    Connection conn = comm.connect(Transport::CudaIpc, peer).get();
    Host2DeviceSemaphore semaphore(comm, conn);
    ackEachSignalKernel<<<1, 1, 0, stream>>>(semaphore.deviceHandle(), kRounds, ack.device(),
                                             results.as<SemaphoreCounts>());
    launched("ackEachSignalKernel");
    bootstrap->barrier();
    auto waitForAck = [&](uint64_t round) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (atomicLoad(ack.host(), memoryOrderAcquire) < round) {
        if (std::chrono::steady_clock::now() > deadline) {
          throw std::runtime_error("no acknowledgement of round " + std::to_string(round) + " from this rank's kernel");
        }
      }
    };
    for (uint64_t r = 1; r <= kRounds; ++r) {
      if (initiator) {
        semaphore.signal();
        waitForAck(r);
      } else {
        waitForAck(r);
        semaphore.signal();
      }
    }
    finish(stream, "ackEachSignalKernel");
    SemaphoreCounts after = wordToHost(results.as<SemaphoreCounts>(), stream);
    EXPECT_EQ(after.expected, kRounds);
    EXPECT_EQ(after.inbound, kRounds);
    EXPECT_EQ(after.pollAfter, 0u);
  });
}

class DataPlaneMemorySemaphoreTest : public DataPlaneMpTest, public ::testing::WithParamInterface<bool> {};

TEST_P(DataPlaneMemorySemaphoreTest, PingPongKeepsCountsOver100000Rounds) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  const bool relaxed = GetParam();
  constexpr uint32_t kRounds = 100000;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& mailbox = allocate(256);
    DeviceMemory& results = allocate(sizeof(SemaphoreCounts));
    Communicator comm(bootstrap);
    auto connection = comm.connect(Transport::CudaIpc, peer);
    RegisteredMemory mailboxMemory = comm.registerMemory(mailbox.get(), mailbox.bytes(), Transport::CudaIpc);
    comm.sendMemory(mailboxMemory, peer);
    RegisteredMemory peerMailbox = comm.recvMemory(peer).get();
    Connection conn = connection.get();
    MemoryDevice2DeviceSemaphore semaphore(comm, conn);
    auto handle = semaphore.deviceHandle();
    ASSERT_NE(handle.remoteInboundToken, nullptr);
    bootstrap->barrier();  // launched together, so that no wait covers the peer's setup
    auto* kernel = relaxed ? memoryPingPongKernel<true> : memoryPingPongKernel<false>;
    kernel<<<1, 1, 0, stream>>>(handle, mailbox.as<uint32_t>(), static_cast<uint32_t*>(peerMailbox.data()), kRounds,
                                initiator, rank, peer, results.as<SemaphoreCounts>());
    launched("memoryPingPongKernel");
    finish(stream, "memoryPingPongKernel");
    SemaphoreCounts after = wordToHost(results.as<SemaphoreCounts>(), stream);
    EXPECT_EQ(after.errors, 0u) << "rounds whose data was not visible after wait()";
    EXPECT_EQ(after.outbound, kRounds);
    EXPECT_EQ(after.expected, kRounds);
    EXPECT_EQ(after.inbound, kRounds);
    EXPECT_EQ(after.pollAfter, 0u);
    // The host reads the same words the handle points to.
    EXPECT_EQ(wordToHost(handle.inboundToken, stream), kRounds);
    EXPECT_EQ(wordToHost(handle.outboundToken, stream), kRounds);
    bootstrap->barrier();  // the peer's kernel has stopped signaling into this rank's token
  });
}

INSTANTIATE_TEST_SUITE_P(DataPlane, DataPlaneMemorySemaphoreTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Relaxed") : std::string("Ordered");
                         });

TEST_F(DataPlaneSemaphoreTest, HostToHostSemaphoreOverCudaIpcIsRefused) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(Transport::CudaIpc, peer).get();
    Semaphore semaphore = comm.buildSemaphore(conn, peer).get();
    expectInvalidUsage([&] { Host2HostSemaphore refused(semaphore); }, "Host2HostSemaphore from a CudaIpc Semaphore");
    // The communicator form builds the semaphore with the peer (both sides call it), then refuses.
    expectInvalidUsage([&] { Host2HostSemaphore refused(comm, conn); }, "Host2HostSemaphore over a CudaIpc connection");
  });
}

TEST_F(DataPlaneSemaphoreTest, MemorySemaphoreOverEthernetIsRefused) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(EndpointConfig{Transport::Ethernet, DeviceType::GPU}, peer).get();
    // Over Ethernet the peer's token is not mapped here: only a proxy can signal it.
    expectInvalidUsage([&] { MemoryDevice2DeviceSemaphore refused(comm, conn); },
                       "MemoryDevice2DeviceSemaphore over Ethernet");
  });
}

TEST_F(DataPlaneSemaphoreTest, HostToDeviceSemaphoreOnAHostEndpointIsRefused) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(EndpointConfig{Transport::Ethernet, DeviceType::CPU}, peer).get();
    expectInvalidUsage([&] { Host2DeviceSemaphore refused(comm, conn); }, "Host2DeviceSemaphore on a CPU endpoint");
  });
}

// ---- Ethernet into GPU memory ----
//
// The receiver copies into GPU memory asynchronously: whoever sees a token written after the data
// must see all of the data, without a flush in between. The writes are larger than the receiver's
// staging buffer, so its halves are reused several times while the token waits behind them.

constexpr uint64_t kEthernetGpuBytes = (9 << 20) + 12;

TEST_F(DataPlaneEthernetGpuTest, AGpuWaiterThatSeesTheTokenSeesAllDataWrittenBeforeIt) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& src = allocate(kEthernetGpuBytes);
    DeviceMemory& inbox = allocate(kEthernetGpuBytes);
    DeviceMemory& bad = allocate(2 * sizeof(unsigned long long));
    Communicator comm(bootstrap);
    Connection conn = comm.connect(EndpointConfig{Transport::Ethernet, DeviceType::GPU}, peer).get();
    Host2DeviceSemaphore semaphore(comm, conn);
    RegisteredMemory srcMemory = comm.registerMemory(src.get(), kEthernetGpuBytes, Transport::Ethernet);
    RegisteredMemory inboxMemory = comm.registerMemory(inbox.get(), kEthernetGpuBytes, Transport::Ethernet);
    comm.sendMemory(inboxMemory, peer);
    RegisteredMemory peerInbox = comm.recvMemory(peer).get();
    fillPattern(src.get(), kEthernetGpuBytes, sourceSeed(rank, 0), stream);
    fillPattern(inbox.get(), kEthernetGpuBytes, backgroundSeed(rank, 0), stream);
    finish(stream, "filling the buffers");
    const unsigned long long none[2] = {0, ~0ULL};
    cudaCheck(cudaMemcpy(bad.get(), none, sizeof(none), cudaMemcpyHostToDevice), "cudaMemcpy");
    const ExpectedBytes expected{0, kEthernetGpuBytes, sourceSeed(peer, 0), 0, backgroundSeed(rank, 0)};
    waitThenCountKernel<<<1, 1024, 0, stream>>>(semaphore.deviceHandle(), inbox.as<uint8_t>(), kEthernetGpuBytes,
                                                expected, bad.as<unsigned long long>(0), bad.as<unsigned long long>(1));
    launched("waitThenCountKernel");
    bootstrap->barrier();  // both inboxes are filled and watched
    conn.write(peerInbox, 0, srcMemory, 0, kEthernetGpuBytes);
    semaphore.signal();
    finish(stream, "waitThenCountKernel");
    const std::vector<unsigned long long> found = toHost<unsigned long long>(bad.get(), 2, stream);
    EXPECT_EQ(found[0], 0u) << "first wrong byte at offset " << found[1];
    conn.flush();
    bootstrap->barrier();
  });
}

TEST_F(DataPlaneEthernetGpuTest, AHostWaiterThatSeesTheTokenSeesAllGpuDataWrittenBeforeIt) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    std::vector<uint8_t> src(kEthernetGpuBytes);
    for (uint64_t i = 0; i < src.size(); ++i) src[i] = patternByte(sourceSeed(rank, 1), i);
    DeviceMemory& inbox = allocate(kEthernetGpuBytes);
    Communicator comm(bootstrap);
    // A host endpoint: the data leaves host memory, lands in the peer's GPU memory, and the token
    // the peer's host waits on is host memory.
    Connection conn = comm.connect(EndpointConfig{Transport::Ethernet, DeviceType::CPU}, peer).get();
    Host2HostSemaphore semaphore(comm, conn);
    RegisteredMemory srcMemory = comm.registerMemory(src.data(), src.size(), Transport::Ethernet);
    RegisteredMemory inboxMemory = comm.registerMemory(inbox.get(), kEthernetGpuBytes, Transport::Ethernet);
    comm.sendMemory(inboxMemory, peer);
    RegisteredMemory peerInbox = comm.recvMemory(peer).get();
    fillPattern(inbox.get(), kEthernetGpuBytes, backgroundSeed(rank, 1), stream);
    finish(stream, "filling the inbox");
    bootstrap->barrier();
    conn.write(peerInbox, 0, srcMemory, 0, kEthernetGpuBytes);
    semaphore.signal();
    semaphore.wait(-1);
    // No flush, no barrier: the token alone says the peer's data is in this GPU's memory.
    const ExpectedBytes expected{0, kEthernetGpuBytes, sourceSeed(peer, 1), 0, backgroundSeed(rank, 1)};
    Mismatches bad = countUnexpected(inbox.get(), kEthernetGpuBytes, expected, stream);
    EXPECT_EQ(bad.count, 0u) << "first wrong byte at offset " << bad.first;
    conn.flush();
    bootstrap->barrier();
  });
}
