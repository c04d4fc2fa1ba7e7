// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The proxy path between real processes: kernels push requests into a Fifo, a Proxy thread pops them,
// and a ProxyService turns them into writes and signals over a connection (CudaIpc, Ethernet between
// GPU buffers, IB over the substitute verbs provider). Ranks work in pairs; every check is made by the
// rank that owns the memory.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mscclpp/port_channel.hpp>
#include <mscclpp/proxy.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ib_substitute/ib_test_util.hpp"
#include "mp_unit/data_plane_util.hpp"

/// Skips on every rank unless each has the substitute verbs provider loaded.
#define MSCCLPP_REQUIRE_IB_SUBSTITUTE_ON_EVERY_RANK()                                         \
  do {                                                                                        \
    if (anyRank(!::mscclpp::test::ibSubstituteLoaded())) {                                    \
      GTEST_SKIP() << "needs the substitute verbs provider in MSCCLPP_IBV_SO (set by ctest)"; \
    }                                                                                         \
  } while (0)

using namespace mscclpp;
using namespace mscclpp::test;

namespace {

// Each rank's buffer: step s of a test sends from OUT + s*kStep and receives into IN + s*kStep. The
// request forms that take one offset for both sides use SAME: there each side sends from its own
// slot and receives into the other slot (so no region is both a source and a destination).
constexpr uint64_t kStep = 128 << 10;
constexpr uint64_t kOutArea = 0;
constexpr uint64_t kInArea = 1 << 20;
constexpr uint64_t kSameArea = 2 << 20;
constexpr uint64_t kPortBuffer = 4 << 20;

/// Word i of [region, region+bytes) becomes stamp(side, step, i).
__device__ void stampWords(char* region, uint64_t bytes, uint32_t side, uint32_t step) {
  uint32_t* words = reinterpret_cast<uint32_t*>(region);
  for (uint64_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) words[i] = stamp(side, step, i);
}

/// Counts words of dst[0, bytes) that are not the peer's stamps of its source words srcWord, srcWord+1...
__device__ void checkWords(const char* dst, uint64_t bytes, uint64_t srcWord, uint32_t peerSide, uint32_t step,
                           unsigned long long* errors) {
  const uint32_t* words = reinterpret_cast<const uint32_t*>(dst);
  for (uint64_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
    if (words[i] != stamp(peerSide, step, srcWord + i)) atomicAdd(errors, 1ULL);
  }
}

__device__ char* outSlot(char* mine, int step) { return mine + kOutArea + step * kStep; }
__device__ char* inSlot(char* mine, int step) { return mine + kInArea + step * kStep; }

/// Every request form of a port channel, one step after another, run by both sides at once. Thread 0
/// pushes and waits; all threads stamp and check. errors[s] counts wrong words of step s.
__global__ void everyRequestFormKernel(PortChannelDeviceHandle channel, MemoryId dstId, MemoryId srcId, char* mine,
                                       bool initiator, uint32_t side, uint32_t peerSide, int64_t spin,
                                       unsigned long long* errors) {
  const bool leader = threadIdx.x == 0;
  const uint64_t out0 = kOutArea, in0 = kInArea;

  // 0: two put()s with different offsets on each side, then one signal() covering both.
  stampWords(outSlot(mine, 0), kStep, side, 0);
  __syncthreads();
  if (leader) {
    channel.put(in0 + 4, out0 + 4, 4092);
    channel.put(in0 + 8192, out0 + 8200, 20000);
    channel.signal();
    channel.wait(spin);
  }
  __syncthreads();
  checkWords(inSlot(mine, 0) + 4, 4092, 1, peerSide, 0, errors + 0);
  checkWords(inSlot(mine, 0) + 8192, 20000, 8200 / 4, peerSide, 0, errors + 0);

  // 1: putWithSignal(dstOffset, srcOffset, size).
  stampWords(outSlot(mine, 1), kStep, side, 1);
  __syncthreads();
  if (leader) {
    channel.putWithSignal(in0 + kStep + 12, out0 + kStep + 28, 65536 + 4);
    channel.wait(spin);
  }
  __syncthreads();
  checkWords(inSlot(mine, 1) + 12, 65536 + 4, 28 / 4, peerSide, 1, errors + 1);

  // 2: putWithSignalAndFlush(dstOffset, srcOffset, size): once it returns the source may be reused,
  // so it is overwritten at once; the peer must still receive what was there before.
  stampWords(outSlot(mine, 2), kStep, side, 2);
  __syncthreads();
  if (leader) channel.putWithSignalAndFlush(in0 + 2 * kStep, out0 + 2 * kStep, kStep, spin);
  __syncthreads();
  stampWords(outSlot(mine, 2), kStep, side, 1000);
  __syncthreads();
  if (leader) channel.wait(spin);
  __syncthreads();
  checkWords(inSlot(mine, 2), kStep, 0, peerSide, 2, errors + 2);

  // 3: put(offset, size) with the same offset on both sides, flush(), reuse the source, signal().
  const uint64_t mySame = kSameArea + (initiator ? 0 : kStep);
  const uint64_t peerSame = kSameArea + (initiator ? kStep : 0);
  stampWords(mine + mySame, kStep, side, 3);
  __syncthreads();
  if (leader) {
    channel.put(mySame, kStep - 4);
    channel.flush(spin);
  }
  __syncthreads();
  stampWords(mine + mySame, kStep, side, 1001);
  __syncthreads();
  if (leader) {
    channel.signal();
    channel.wait(spin);
  }
  __syncthreads();
  checkWords(mine + peerSame, kStep - 4, 0, peerSide, 3, errors + 3);

  // 4: putWithSignal(offset, size), then putWithSignalAndFlush(offset, size) of the next piece.
  const uint64_t my4 = kSameArea + 2 * kStep + (initiator ? 0 : kStep);
  const uint64_t peer4 = kSameArea + 2 * kStep + (initiator ? kStep : 0);
  stampWords(mine + my4, kStep, side, 4);
  __syncthreads();
  if (leader) {
    channel.putWithSignal(my4, 4096);
    channel.putWithSignalAndFlush(my4 + 4096, 8192);
    channel.wait(spin);
    channel.wait(spin);
  }
  __syncthreads();
  checkWords(mine + peer4, 4096 + 8192, 0, peerSide, 4, errors + 4);

  // 5: the base handle's forms, naming the memories by id.
  stampWords(outSlot(mine, 5), kStep, side, 5);
  __syncthreads();
  if (leader) {
    BasePortChannelDeviceHandle& base = channel;
    base.put(dstId, in0 + 5 * kStep, srcId, out0 + 5 * kStep, 1024);
    base.putWithSignal(dstId, in0 + 5 * kStep + 1024, srcId, out0 + 5 * kStep + 1024, 1024);
    base.wait(spin);
  }
  __syncthreads();
  checkWords(inSlot(mine, 5), 2048, 0, peerSide, 5, errors + 5);

  // 6: poll() consumes exactly the signals sent: three here, and nothing is left after them.
  if (leader) {
    channel.signal();
    channel.signal();
    channel.signal();
    int consumed = 0;
    for (int64_t spins = 0; consumed < 3 && spins < spin; ++spins) {
      if (channel.poll()) ++consumed;
    }
    if (consumed != 3) atomicAdd(errors + 6, 1ULL);
    if (channel.poll()) atomicAdd(errors + 6, 1ULL);
    channel.flush(spin);
  }
}

constexpr int kSteps = 7;

/// Round r of a ping-pong through putWithSignal: one side stamps OUT slot 0 and sends it into the
/// peer's IN slot 0 with a signal; the other waits, checks, and answers the same way.
__global__ void portPingPongKernel(PortChannelDeviceHandle channel, char* mine, uint64_t bytes, uint32_t firstRound,
                                   uint32_t rounds, bool initiator, uint32_t side, uint32_t peerSide,
                                   unsigned long long* errors) {
  for (uint32_t r = firstRound; r < firstRound + rounds; ++r) {
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == initiator) {
        stampWords(outSlot(mine, 0), bytes, side, r);
        __syncthreads();
        if (threadIdx.x == 0) channel.putWithSignal(kInArea, kOutArea, bytes);
      } else {
        if (threadIdx.x == 0) channel.wait(kDeviceSpinLimit);
        __syncthreads();
        checkWords(inSlot(mine, 0), bytes, 0, peerSide, r, errors);
        __syncthreads();
      }
    }
  }
  if (threadIdx.x == 0) channel.flush(kDeviceSpinLimit);
}

/// Many threads push small puts at once through a FIFO far smaller than their number; then one signal.
__global__ void manySmallPutsKernel(PortChannelDeviceHandle channel, uint32_t putsPerThread) {
  const uint64_t threads = blockDim.x;
  for (uint32_t j = 0; j < putsPerThread; ++j) {
    const uint64_t word = j * threads + threadIdx.x;
    channel.put(kInArea + 8 * word, kOutArea + 8 * word, 8);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    channel.signal();
    channel.wait(kDeviceSpinLimit);
    channel.flush(kDeviceSpinLimit);
  }
}

__global__ void stampKernel(char* region, uint64_t bytes, uint32_t side, uint32_t step) {
  stampWords(region, bytes, side, step);
}

__global__ void checkKernel(const char* region, uint64_t bytes, uint32_t peerSide, uint32_t step,
                            unsigned long long* errors) {
  checkWords(region, bytes, 0, peerSide, step, errors);
}

/// Thread t pushes triggers (t, 0), (t, 1), ... encoded in the srcOffset and dstOffset fields.
__global__ void rawPushKernel(FifoDeviceHandle fifo, uint32_t perThread) {
  for (uint32_t j = 0; j < perThread; ++j) {
    fifo.push(ProxyTrigger(TriggerData, threadIdx.x % 512, j, 0, threadIdx.x, j + 1, 0));
  }
}

/// A request that names a memory or semaphore that does not exist, then a valid exchange with the
/// peer: the proxy must report the first and keep serving the second.
__global__ void badThenGoodRequestKernel(BasePortChannelDeviceHandle bad, bool badSemaphore, MemoryId missingMemory,
                                         PortChannelDeviceHandle good, char* mine, uint32_t side, uint32_t peerSide,
                                         unsigned long long* errors) {
  if (threadIdx.x == 0) {
    if (badSemaphore) {
      bad.signal();
    } else {
      bad.put(missingMemory, 0, 0, 0, 8);
    }
    bad.flush(kDeviceSpinLimit);
  }
  stampWords(outSlot(mine, 0), 4096, side, 7);
  __syncthreads();
  if (threadIdx.x == 0) {
    good.putWithSignalAndFlush(kInArea, kOutArea, 4096, kDeviceSpinLimit);
    good.wait(kDeviceSpinLimit);
  }
  __syncthreads();
  checkWords(inSlot(mine, 0), 4096, 0, peerSide, 7, errors);
}

/// One side of a port-channel pair: a connection over `transport`, this rank's buffer and the peer's,
/// both added to `proxy`, and a semaphore with the peer.
struct PortPair {
  Connection connection;
  RegisteredMemory local;
  RegisteredMemory remote;
  SemaphoreId semaphore = 0;
  MemoryId dst = 0;
  MemoryId src = 0;
};

PortPair connectPortPair(Communicator& comm, ProxyService& proxy, int peer, EndpointConfig config, char* buffer,
                         size_t bytes) {
  PortPair pair;
  auto connection = comm.connect(config, peer);
  pair.local = comm.registerMemory(buffer, bytes, config.transport);
  comm.sendMemory(pair.local, peer);
  pair.remote = comm.recvMemory(peer).get();
  pair.connection = connection.get();
  pair.semaphore = proxy.buildAndAddSemaphore(comm, pair.connection);
  pair.dst = proxy.addMemory(pair.remote);
  pair.src = proxy.addMemory(pair.local);
  return pair;
}

const EndpointConfig kCudaIpc{Transport::CudaIpc};
const EndpointConfig kEthernetGpu{Transport::Ethernet, DeviceType::GPU};

}  // namespace

class DataPlanePortChannelTest : public DataPlaneMpTest {
 protected:
  /// `hostBuffer`: the channel's memory is pinned host memory mapped for the kernel, not GPU memory.
  void everyRequestForm(const EndpointConfig& config, bool hostBuffer = false) {
    runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
      TestStream stream;
      std::unique_ptr<MappedHostMemory<char>> hostMemory;
      if (hostBuffer) hostMemory = std::make_unique<MappedHostMemory<char>>(kPortBuffer);
      // Under unified addressing the kernel uses the host pointer of mapped memory as is.
      char* bufferPtr = hostBuffer ? hostMemory->device() : allocate(kPortBuffer).get();
      DeviceMemory& errors = allocate(kSteps * sizeof(unsigned long long));
      Communicator comm(bootstrap);
      ProxyService proxy;
      PortPair pair =
          connectPortPair(comm, proxy, peer, config, hostBuffer ? hostMemory->host() : bufferPtr, kPortBuffer);
      PortChannel channel = proxy.portChannel(pair.semaphore, pair.dst, pair.src);
      proxy.startProxy();
      bootstrap->barrier();
      everyRequestFormKernel<<<1, 256, 0, stream>>>(channel.deviceHandle(), pair.dst, pair.src, bufferPtr, initiator,
                                                    rank, peer, kDeviceSpinLimit, errors.as<unsigned long long>());
      launched("everyRequestFormKernel");
      finish(stream, "everyRequestFormKernel");
      std::vector<unsigned long long> wrong = toHost<unsigned long long>(errors.get(), kSteps, stream);
      const char* steps[kSteps] = {
          "put + put + signal", "putWithSignal", "putWithSignalAndFlush", "put + flush + signal", "same-offset forms",
          "base handle forms",  "poll"};
      for (int s = 0; s < kSteps; ++s) EXPECT_EQ(wrong[s], 0u) << "step " << s << ": " << steps[s];
      bootstrap->barrier();  // the peer's proxy has nothing left to deliver here
      EXPECT_NO_THROW(proxy.stopProxy()) << "no request failed on the proxy";
    });
  }
};

TEST_F(DataPlanePortChannelTest, EveryRequestFormOverCudaIpc) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  everyRequestForm(kCudaIpc);
}

TEST_F(DataPlanePortChannelTest, EveryRequestFormOverEthernetBetweenGpuBuffers) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  everyRequestForm(kEthernetGpu);
}

// IB with the SUBSTITUTE verbs provider that ctest loads through MSCCLPP_IBV_SO (no RDMA hardware):
// GPU memory goes through its DMA-BUF registration where the driver allows, else peer memory.
TEST_F(DataPlanePortChannelTest, EveryRequestFormOverIbSubstituteBetweenGpuBuffers) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  MSCCLPP_REQUIRE_IB_SUBSTITUTE_ON_EVERY_RANK();
  everyRequestForm(EndpointConfig{Transport::IB0, DeviceType::GPU});
}

TEST_F(DataPlanePortChannelTest, EveryRequestFormOverIbSubstituteBetweenHostBuffers) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  MSCCLPP_REQUIRE_IB_SUBSTITUTE_ON_EVERY_RANK();
  everyRequestForm(EndpointConfig{Transport::IB1, DeviceType::GPU}, /*hostBuffer=*/true);
}

TEST_F(DataPlanePortChannelTest, SemaphoresAndMemoriesAddedAfterStartProxyAreServed) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  constexpr uint64_t kBytes = 4096 + 12;
  constexpr uint32_t kRounds = 2000;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream first, second;
    DeviceMemory& buffer = allocate(kPortBuffer);
    DeviceMemory& later = allocate(kPortBuffer);
    DeviceMemory& errors = allocate(2 * sizeof(unsigned long long));
    Communicator comm(bootstrap);
    ProxyService proxy;
    proxy.startProxy(true);
    PortPair pair = connectPortPair(comm, proxy, peer, kCudaIpc, buffer.get(), buffer.bytes());
    PortChannel channel = proxy.portChannel(pair.semaphore, pair.dst, pair.src);
    bootstrap->barrier();
    portPingPongKernel<<<1, 128, 0, first>>>(channel.deviceHandle(), buffer.get(), kBytes, 1, kRounds, initiator, rank,
                                             peer, errors.as<unsigned long long>(0));
    launched("portPingPongKernel");
    // While the proxy serves that ping-pong, a second connection, semaphore and pair of memories join.
    PortPair added = connectPortPair(comm, proxy, peer, kCudaIpc, later.get(), later.bytes());
    PortChannel addedChannel = proxy.portChannel(added.semaphore, added.dst, added.src);
    EXPECT_EQ(added.semaphore, pair.semaphore + 1);
    EXPECT_EQ(added.dst, pair.src + 1);
    finish(first, "portPingPongKernel on the first channel");
    bootstrap->barrier();
    portPingPongKernel<<<1, 128, 0, second>>>(addedChannel.deviceHandle(), later.get(), kBytes, 1, 200, initiator, rank,
                                              peer, errors.as<unsigned long long>(1));
    launched("portPingPongKernel");
    finish(second, "portPingPongKernel on the added channel");
    std::vector<unsigned long long> wrong = toHost<unsigned long long>(errors.get(), 2, first);
    EXPECT_EQ(wrong[0], 0u) << "words wrong on the channel made before startProxy";
    EXPECT_EQ(wrong[1], 0u) << "words wrong on the channel added while the proxy ran";
    bootstrap->barrier();
    EXPECT_NO_THROW(proxy.stopProxy());
  });
}

TEST_F(DataPlanePortChannelTest, FourSlotFifoPushedFarPastWrapAround) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  constexpr uint32_t kThreads = 32;
  constexpr uint32_t kPutsPerThread = 128;  // 4096 requests through 4 slots, from 32 threads at once
  constexpr uint64_t kWords = uint64_t{kThreads} * kPutsPerThread;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& buffer = allocate(kPortBuffer);
    DeviceMemory& errors = allocate(sizeof(unsigned long long));
    stampKernel<<<1, 256, 0, stream>>>(buffer.get() + kOutArea, kWords * 8, rank, 9);
    launched("stampKernel");
    finish(stream, "stampKernel");
    Communicator comm(bootstrap);
    ProxyService proxy(4);
    PortPair pair = connectPortPair(comm, proxy, peer, kCudaIpc, buffer.get(), buffer.bytes());
    PortChannel channel = proxy.portChannel(pair.semaphore, pair.dst, pair.src);
    EXPECT_EQ(channel.deviceHandle().fifo_.size, 4);
    proxy.startProxy();
    bootstrap->barrier();
    manySmallPutsKernel<<<1, kThreads, 0, stream>>>(channel.deviceHandle(), kPutsPerThread);
    launched("manySmallPutsKernel");
    finish(stream, "manySmallPutsKernel");
    checkKernel<<<1, 256, 0, stream>>>(buffer.get() + kInArea, kWords * 8, peer, 9, errors.as<unsigned long long>());
    launched("checkKernel");
    EXPECT_EQ(wordToHost(errors.as<unsigned long long>(), stream), 0u) << "words the small puts did not deliver";
    bootstrap->barrier();
    EXPECT_NO_THROW(proxy.stopProxy());
  });
}

TEST_F(DataPlanePortChannelTest, RequestNamingAMissingMemoryMakesStopProxyRethrow) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& buffer = allocate(kPortBuffer);
    DeviceMemory& errors = allocate(sizeof(unsigned long long));
    Communicator comm(bootstrap);
    ProxyService proxy;
    PortPair pair = connectPortPair(comm, proxy, peer, kCudaIpc, buffer.get(), buffer.bytes());
    PortChannel channel = proxy.portChannel(pair.semaphore, pair.dst, pair.src);
    const MemoryId missing = proxy.nextMemoryId() + 5;
    proxy.startProxy();
    bootstrap->barrier();
    badThenGoodRequestKernel<<<1, 128, 0, stream>>>(proxy.basePortChannel(pair.semaphore).deviceHandle(), false,
                                                    missing, channel.deviceHandle(), buffer.get(), rank, peer,
                                                    errors.as<unsigned long long>());
    launched("badThenGoodRequestKernel");
    finish(stream, "badThenGoodRequestKernel");
    EXPECT_EQ(wordToHost(errors.as<unsigned long long>(), stream), 0u) << "the proxy kept serving after the error";
    bootstrap->barrier();
    expectInvalidUsage([&] { proxy.stopProxy(); }, "stopProxy after a request named memory " + std::to_string(missing));
  });
}

TEST_F(DataPlanePortChannelTest, RequestNamingAMissingSemaphoreIsRethrownByTheNextCallOnTheService) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    TestStream stream;
    DeviceMemory& buffer = allocate(kPortBuffer);
    DeviceMemory& errors = allocate(sizeof(unsigned long long));
    Communicator comm(bootstrap);
    ProxyService proxy;
    PortPair pair = connectPortPair(comm, proxy, peer, kCudaIpc, buffer.get(), buffer.bytes());
    PortChannel channel = proxy.portChannel(pair.semaphore, pair.dst, pair.src);
    const BasePortChannelDeviceHandle valid = proxy.basePortChannel(pair.semaphore).deviceHandle();
    // Semaphore ids up to 1023 fit the request; this one was never added.
    const BasePortChannelDeviceHandle bad(1000, valid.semaphore_, valid.fifo_);
    proxy.startProxy();
    bootstrap->barrier();
    badThenGoodRequestKernel<<<1, 128, 0, stream>>>(bad, true, 0, channel.deviceHandle(), buffer.get(), rank, peer,
                                                    errors.as<unsigned long long>());
    launched("badThenGoodRequestKernel");
    finish(stream, "badThenGoodRequestKernel");
    EXPECT_EQ(wordToHost(errors.as<unsigned long long>(), stream), 0u) << "the proxy kept serving after the error";
    // The error surfaces at the next call of any kind, once.
    expectInvalidUsage([&] { proxy.nextMemoryId(); }, "the first call after a request named semaphore 1000");
    EXPECT_NO_THROW(proxy.nextMemoryId()) << "the error is reported once";
    bootstrap->barrier();
    EXPECT_NO_THROW(proxy.stopProxy()) << "the error was already reported";
  });
}

class DataPlaneProxyTest : public DataPlaneMpTest {};

TEST_F(DataPlaneProxyTest, ThreeSlotFifoDeliversEveryTriggerOnceInPushOrder) {
  MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS();
  constexpr uint32_t kThreads = 64;
  constexpr uint32_t kPerThread = 200;
  constexpr size_t kTotal = size_t{kThreads} * kPerThread;
  runPairTest([&](std::shared_ptr<TcpBootstrap>) {
    TestStream stream;
    std::vector<ProxyTrigger> seen;
    seen.reserve(kTotal);
    std::atomic<size_t> count{0};
    Proxy proxy(
        [&](ProxyTrigger trigger) {
          seen.push_back(trigger);
          count.fetch_add(1, std::memory_order_release);
          return ProxyHandlerResult::Continue;
        },
        3);
    ASSERT_EQ(proxy.fifo()->size(), 3);
    proxy.start(true);
    rawPushKernel<<<1, kThreads, 0, stream>>>(proxy.fifo()->deviceHandle(), kPerThread);
    launched("rawPushKernel");
    finish(stream, "rawPushKernel");
    // The last pushes may still be in the ring when the kernel ends.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (count.load(std::memory_order_acquire) < kTotal && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    proxy.stop();
    ASSERT_EQ(seen.size(), kTotal);
    std::vector<uint32_t> next(kThreads, 0);
    size_t outOfOrder = 0;
    for (const ProxyTrigger& t : seen) {
      EXPECT_EQ(t.snd & detail::TriggerValidBitMask, 0u) << "the handler sees the valid bit cleared";
      EXPECT_EQ(static_cast<uint64_t>(t.fields.type), TriggerData);
      const uint32_t thread = static_cast<uint32_t>(t.fields.srcOffset);
      const uint32_t index = static_cast<uint32_t>(t.fields.dstOffset);
      ASSERT_LT(thread, kThreads);
      EXPECT_EQ(static_cast<uint64_t>(t.fields.size), index + 1u);
      if (index != next[thread]) ++outOfOrder;
      next[thread] = index + 1;
    }
    EXPECT_EQ(outOfOrder, 0u) << "a thread's triggers arrive once each, in the order it pushed them";
    for (uint32_t t = 0; t < kThreads; ++t) EXPECT_EQ(next[t], kPerThread) << "thread " << t;
  });
}
