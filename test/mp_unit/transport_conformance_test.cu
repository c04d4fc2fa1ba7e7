// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What every transport promises, checked the same way for each (transport, memory kind): writes of
// every size and alignment land whole and nowhere else once flush returns, updateAndSync applies its
// offset once, out-of-range requests are refused, a dead peer makes write/flush fail, and repeated
// setups leave fds, threads and memory flat. Ranks work in pairs (r, r^1), so any even number of ranks
// runs it; a kind whose needs this machine does not meet is skipped with the reason.
//
// A kind is one row of kKinds.

#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <mscclpp/semaphore.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/process_stats.hpp"
#include "mp_unit/child_process.hpp"
#include "mp_unit/data_plane_util.hpp"

using namespace mscclpp;
using namespace mscclpp::test;

namespace {

enum class MemoryKind { Host, Gpu };

/// Why a kind cannot run on this machine; empty when it can.
using Requirement = std::string (*)();

std::string needsNothing() { return ""; }
std::string needsGpu() {
  return gpuCapabilities().gpuAvailable() ? "" : "needs a GPU: " + gpuCapabilities().unavailableReason;
}
/// IB0 names a verbs device: a verbs library loaded and listing one. Where no RDMA device exists, ctest's
/// mp_unit_tests entries point MSCCLPP_IBV_SO at the substitute provider (test/ib_substitute/).
std::string needsIb() {
  try {
    getIBDeviceName(Transport::IB0);
    return "";
  } catch (const Error& e) {
    return std::string(
               "needs an IB device for IB0 (MSCCLPP_IBV_SO may name the substitute provider, "
               "libmscclpp_ibv_substitute.so): ") +
           e.what();
  }
}
std::string needsGpuAndIb() {
  const std::string gpu = needsGpu();
  return gpu.empty() ? needsIb() : gpu;
}

struct ConformanceKind {
  const char* name;
  EndpointConfig endpoint;
  MemoryKind memory;
  Requirement requirement;
  /// The largest single write tried. On host memory filling and checking the buffers costs CPU time
  /// that CI does not have for 256 MiB; 16 MiB still spans several Ethernet chunks.
  uint64_t largestWrite;
  /// Why this transport cannot notice that its peer died; empty when it must.
  const char* peerDeathUnseen;
};

constexpr uint64_t kMiB = 1 << 20;

constexpr const char* kCudaIpcSeesNoPeer =
    "a CudaIpc write is a copy by this process into a mapping it holds; no channel to the peer exists to fail";

const ConformanceKind kKinds[] = {
    {"CudaIpc", {Transport::CudaIpc, DeviceType::GPU}, MemoryKind::Gpu, needsGpu, 256 * kMiB, kCudaIpcSeesNoPeer},
    {"EthernetHost", {Transport::Ethernet, DeviceType::CPU}, MemoryKind::Host, needsNothing, 16 * kMiB + 12, ""},
    {"EthernetGpu", {Transport::Ethernet, DeviceType::GPU}, MemoryKind::Gpu, needsGpu, 256 * kMiB, ""},
    {"IbHost", {Transport::IB0, DeviceType::CPU}, MemoryKind::Host, needsIb, 16 * kMiB + 12, ""},
    {"IbGpu", {Transport::IB0, DeviceType::GPU}, MemoryKind::Gpu, needsGpuAndIb, 256 * kMiB, ""},
};

void PrintTo(const ConformanceKind& kind, std::ostream* os) { *os << kind.name; }

const ConformanceKind* findKind(const std::string& name) {
  for (const ConformanceKind& kind : kKinds)
    if (name == kind.name) return &kind;
  return nullptr;
}

// Every buffer has this many bytes before the registered region, and kTail after it: the registered
// pointer is interior to its allocation (so an offset applied twice lands inside the allocation,
// visibly), and the bytes on either side are checked to be untouched.
constexpr uint64_t kLead = 4096 + 24;
constexpr uint64_t kTail = 4096 + 8;

uint32_t sourceSeed(int rank, int round) { return 0x2000u + 977u * rank + 31u * round; }
uint32_t backgroundSeed(int rank, int round) { return 0x9000u + 613u * rank + 17u * round; }

/// Memory of one kind, filled with patterns and checked byte by byte. Host memory is checked by this
/// thread, GPU memory by a kernel.
class KindBuffer {
 public:
  KindBuffer(MemoryKind kind, uint64_t bytes, cudaStream_t stream) : bytes_(bytes), stream_(stream) {
    if (kind == MemoryKind::Gpu) {
      gpu_ = std::make_unique<DeviceMemory>(bytes);
    } else {
      host_.assign(bytes, 0);
    }
  }
  char* get() { return gpu_ ? gpu_->get() : reinterpret_cast<char*>(host_.data()); }
  uint64_t bytes() const { return bytes_; }

  void fill(uint32_t seed) {
    if (gpu_) {
      fillPattern(gpu_->get(), bytes_, seed, stream_);
      finish(stream_, "filling a buffer");
    } else {
      for (uint64_t i = 0; i < bytes_; ++i) host_[i] = patternByte(seed, i);
    }
  }

  Mismatches check(const ExpectedBytes& e) {
    if (gpu_) return countUnexpected(gpu_->get(), bytes_, e, stream_);
    Mismatches out;
    for (uint64_t i = 0; i < bytes_; ++i) {
      const uint8_t want =
          (i >= e.lo && i < e.hi) ? patternByte(e.seed, e.srcFirst + (i - e.lo)) : patternByte(e.backgroundSeed, i);
      if (host_[i] != want) {
        if (out.count++ == 0) out.first = i;
      }
    }
    return out;
  }

  std::vector<uint64_t> words() {
    if (gpu_) return toHost<uint64_t>(gpu_->get(), bytes_ / 8, stream_);
    std::vector<uint64_t> out(bytes_ / 8);
    std::memcpy(out.data(), host_.data(), out.size() * 8);
    return out;
  }

 private:
  uint64_t bytes_;
  cudaStream_t stream_;
  std::unique_ptr<DeviceMemory> gpu_;
  std::vector<uint8_t> host_;
};

/// Resident memory of this process, in bytes.
uint64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

class TransportConformanceTest : public DataPlaneMpTest, public ::testing::WithParamInterface<ConformanceKind> {
 protected:
  const ConformanceKind& kind() const { return GetParam(); }
  bool onGpu() const { return kind().memory == MemoryKind::Gpu || kind().endpoint.device.type == DeviceType::GPU; }

  /// Skips on every rank unless every rank meets the kind's needs and the ranks pair up; then makes
  /// this rank's GPU current (GPU kinds) and creates the stream the buffers use.
  std::string unmet() {
    const std::string reason = kind().requirement();
    if (anyRank(!reason.empty())) return reason.empty() ? "another rank: its needs are not met" : reason;
    if (nRanks < 2 || nRanks % 2 != 0)
      return "needs an even number of ranks (they work in pairs), have " + std::to_string(nRanks);
    if (onGpu()) {
      if (!selectGpu()) return "a rank could not make its GPU current";
      stream_.emplace();
    }
    return "";
  }

  cudaStream_t stream() const { return stream_ ? static_cast<cudaStream_t>(*stream_) : nullptr; }

  /// A buffer that lives until the test ends: a peer may map it until then.
  KindBuffer& buffer(uint64_t bytes) {
    buffers_.push_back(std::make_unique<KindBuffer>(kind().memory, bytes, stream()));
    return *buffers_.back();
  }

  RegisteredMemory registerRegion(Communicator& comm, KindBuffer& b, uint64_t bytes) {
    return comm.registerMemory(b.get() + kLead, bytes, kind().endpoint.transport);
  }

  void TearDown() override {
    buffers_.clear();
    stream_.reset();
    DataPlaneMpTest::TearDown();
  }

 private:
  std::optional<TestStream> stream_;
  std::vector<std::unique_ptr<KindBuffer>> buffers_;
};

#define MSCCLPP_CONFORMANCE_REQUIRE_KIND()       \
  do {                                           \
    const std::string reason = unmet();          \
    if (!reason.empty()) GTEST_SKIP() << reason; \
  } while (0)

struct WriteCase {
  uint64_t bytes, srcOffset, dstOffset;
};

std::string describe(const WriteCase& c) {
  std::ostringstream s;
  s << c.bytes << " bytes from offset " << c.srcOffset << " to offset " << c.dstOffset;
  return s.str();
}

}  // namespace

TEST_P(TransportConformanceTest, WritesOfEverySizeAndOffsetAreWholeWhenFlushReturns) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  // Odd sizes and offsets, sizes around and across the Ethernet chunk (4 MiB), and the largest.
  const std::vector<WriteCase> all = {
      {1, 0, 0},
      {1, 1, 3},
      {3, 5, 7},
      {8, 0, 8},
      {12, 13, 1},
      {1000, 4, 11},
      {4093, 8, 1},
      {65537, 4099, 13},
      {kMiB + 7, 21, 3},
      {4 * kMiB, 0, 0},
      {4 * kMiB + 1, 7, 5},
      {12 * kMiB + 12345, 77, 77},
      {16 * kMiB + 12, 3, 4093},
      {64 * kMiB + 1, 12, 17},
      {256 * kMiB, 5, 11},
  };
  std::vector<WriteCase> cases;
  for (const WriteCase& c : all)
    if (c.bytes <= kind().largestWrite) cases.push_back(c);
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(kind().endpoint, peer).get();
    for (size_t i = 0; i < cases.size(); ++i) {
      const WriteCase& c = cases[i];
      SCOPED_TRACE(describe(c));
      const uint64_t srcRegion = c.srcOffset + c.bytes, dstRegion = c.dstOffset + c.bytes;
      KindBuffer& src = buffer(kLead + srcRegion + kTail);
      KindBuffer& inbox = buffer(kLead + dstRegion + kTail);
      src.fill(sourceSeed(rank, i));
      inbox.fill(backgroundSeed(rank, i));
      RegisteredMemory srcMemory = registerRegion(comm, src, srcRegion);
      RegisteredMemory inboxMemory = registerRegion(comm, inbox, dstRegion);
      comm.sendMemory(inboxMemory, peer);
      RegisteredMemory peerInbox = comm.recvMemory(peer).get();
      conn.write(peerInbox, c.dstOffset, srcMemory, c.srcOffset, c.bytes);
      conn.flush();
      bootstrap->barrier();  // the peer's flush of its write into this rank's inbox has returned
      const ExpectedBytes expected{kLead + c.dstOffset, kLead + dstRegion, sourceSeed(peer, i), kLead + c.srcOffset,
                                   backgroundSeed(rank, i)};
      const Mismatches bad = inbox.check(expected);
      EXPECT_EQ(bad.count, 0u) << "first wrong byte at offset " << bad.first << " of the allocation (region at "
                               << kLead << ")";
      bootstrap->barrier();  // the peer is done with this case's memory
    }
  });
}

TEST_P(TransportConformanceTest, OneFlushCoversEveryWriteBeforeIt) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  // Back-to-back writes of growing odd sizes into adjacent ranges, with no flush in between.
  constexpr int kWrites = 64;
  uint64_t region = 0;
  for (int w = 0; w < kWrites; ++w) region += 1 + 4099 * w;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(kind().endpoint, peer).get();
    KindBuffer& src = buffer(kLead + region + kTail);
    KindBuffer& inbox = buffer(kLead + region + kTail);
    src.fill(sourceSeed(rank, 0));
    inbox.fill(backgroundSeed(rank, 0));
    RegisteredMemory srcMemory = registerRegion(comm, src, region);
    RegisteredMemory inboxMemory = registerRegion(comm, inbox, region);
    comm.sendMemory(inboxMemory, peer);
    RegisteredMemory peerInbox = comm.recvMemory(peer).get();
    uint64_t offset = 0;
    for (int w = 0; w < kWrites; ++w) {
      const uint64_t bytes = 1 + 4099 * w;
      conn.write(peerInbox, offset, srcMemory, offset, bytes);
      offset += bytes;
    }
    conn.flush();
    bootstrap->barrier();
    const ExpectedBytes expected{kLead, kLead + region, sourceSeed(peer, 0), kLead, backgroundSeed(rank, 0)};
    const Mismatches bad = inbox.check(expected);
    EXPECT_EQ(bad.count, 0u) << "first wrong byte at offset " << bad.first << " of the allocation";
  });
}

TEST_P(TransportConformanceTest, UpdateAndSyncAppliesTheDestinationOffsetOnce) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  constexpr uint64_t kWords = 256;
  // Later updates of the same word win; the last word of the region is a valid target.
  const std::vector<uint64_t> offsets = {0, 40, 8 * 17, 8 * 63, 40, 8 * (kWords - 1)};
  auto value = [](int r, size_t i) { return 0xabc0000000000000ull | (uint64_t(r) << 32) | (i + 1); };
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(kind().endpoint, peer).get();
    KindBuffer& words = buffer(kLead + kWords * 8 + kTail);
    RegisteredMemory wordsMemory = registerRegion(comm, words, kWords * 8);
    comm.sendMemory(wordsMemory, peer);
    RegisteredMemory peerWords = comm.recvMemory(peer).get();
    // Each word is updated through its own source word, which holds what the word holds, as a
    // semaphore's outbound counter mirrors the peer's token: the contract under which every transport
    // leaves the new value there (IB with RDMA atomics adds new - old to the word).
    std::vector<uint64_t> sources(kWords, 0);
    for (size_t i = 0; i < offsets.size(); ++i) {
      uint64_t& source = sources[offsets[i] / 8];
      conn.updateAndSync(peerWords, offsets[i], &source, value(rank, i));
      EXPECT_EQ(source, value(rank, i)) << "updateAndSync stores the new value into *src";
    }
    conn.flush();
    bootstrap->barrier();
    std::vector<uint64_t> want(words.bytes() / 8, 0);
    for (size_t i = 0; i < offsets.size(); ++i) want[(kLead + offsets[i]) / 8] = value(peer, i);
    const std::vector<uint64_t> got = words.words();
    for (size_t w = 0; w < want.size(); ++w) EXPECT_EQ(got[w], want[w]) << "word " << w << " of the allocation";
  });
}

TEST_P(TransportConformanceTest, Host2HostSemaphorePingPongKeepsCountsOverManyRounds) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  if (kind().endpoint.device.type != DeviceType::CPU) GTEST_SKIP() << "a host-to-host semaphore needs a host endpoint";
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(kind().endpoint, peer).get();
    Host2HostSemaphore semaphore(comm, conn);
    // A token goes back and forth 500 times; the lower rank serves first.
    for (int round = 0; round < 500; ++round) {
      if (rank < peer) {
        semaphore.signal();
        semaphore.wait();
      } else {
        semaphore.wait();
        semaphore.signal();
      }
    }
    EXPECT_FALSE(semaphore.poll()) << "no signal beyond those waited for";
    bootstrap->barrier();
  });
}

TEST_P(TransportConformanceTest, OutOfRangeRequestsAreRefusedWithInvalidUsage) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  constexpr uint64_t kRegistered = 32 << 10;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    Communicator comm(bootstrap);
    Connection conn = comm.connect(kind().endpoint, peer).get();
    // Past the registered region there is more allocated memory, where a stray write would be seen.
    KindBuffer& inbox = buffer(kLead + 2 * kRegistered + kTail);
    KindBuffer& src = buffer(kLead + kRegistered + kTail);
    inbox.fill(backgroundSeed(rank, 0));
    src.fill(sourceSeed(rank, 0));
    RegisteredMemory srcMemory = registerRegion(comm, src, kRegistered);
    RegisteredMemory inboxMemory = registerRegion(comm, inbox, kRegistered);
    RegisteredMemory unregistered = comm.registerMemory(src.get() + kLead, kRegistered, NoTransports);
    comm.sendMemory(inboxMemory, peer);
    comm.sendMemory(unregistered, peer);
    RegisteredMemory peerInbox = comm.recvMemory(peer).get();
    RegisteredMemory peerUnregistered = comm.recvMemory(peer).get();
    const uint64_t huge = std::numeric_limits<uint64_t>::max() - 3;
    uint64_t value = 0;
    expectInvalidUsage([&] { conn.write(peerInbox, kRegistered, srcMemory, 0, 1); }, "write starting at the end");
    expectInvalidUsage([&] { conn.write(peerInbox, kRegistered - 3, srcMemory, 0, 8); }, "write across the end");
    expectInvalidUsage([&] { conn.write(peerInbox, huge, srcMemory, 0, 8); }, "write whose end overflows");
    expectInvalidUsage([&] { conn.write(peerInbox, 0, srcMemory, kRegistered - 3, 8); }, "read past the source");
    expectInvalidUsage([&] { conn.write(peerInbox, 0, srcMemory, 0, kRegistered + 1); }, "larger than both");
    expectInvalidUsage([&] { conn.write(peerInbox, 0, peerInbox, 0, 8); }, "source of another process");
    expectInvalidUsage([&] { conn.write(peerInbox, 0, unregistered, 0, 8); }, "source without the transport");
    expectInvalidUsage([&] { conn.write(peerUnregistered, 0, srcMemory, 0, 8); }, "destination without it");
    expectInvalidUsage([&] { conn.updateAndSync(peerInbox, kRegistered - 4, &value, 1); }, "update across the end");
    expectInvalidUsage([&] { conn.updateAndSync(peerInbox, kRegistered, &value, 1); }, "update at the end");
    expectInvalidUsage([&] { conn.updateAndSync(peerInbox, huge, &value, 1); }, "update whose end overflows");
    expectInvalidUsage([&] { conn.updateAndSync(peerInbox, 4, &value, 1); }, "update not 8-byte aligned");
    expectInvalidUsage([&] { conn.updateAndSync(peerInbox, 0, nullptr, 1); }, "update from a null source");
    expectInvalidUsage([&] { conn.updateAndSync(peerUnregistered, 0, &value, 1); }, "update without the transport");
    EXPECT_EQ(value, 0u) << "a refused updateAndSync leaves *src alone";
    // The refusals left the connection usable, and the last bytes of the region are a valid target.
    conn.write(peerInbox, kRegistered - 8, srcMemory, 0, 8);
    conn.flush();
    bootstrap->barrier();
    const ExpectedBytes expected{kLead + kRegistered - 8, kLead + kRegistered, sourceSeed(peer, 0), kLead,
                                 backgroundSeed(rank, 0)};
    const Mismatches bad = inbox.check(expected);
    EXPECT_EQ(bad.count, 0u) << "only the valid write changed the inbox; first wrong byte at " << bad.first;
  });
}

namespace {

// The peer that dies: started by WriteAndFlushFailAfterThePeerDies as a child process, it connects to
// its parent with the kind's transport, offers a buffer, and waits to be killed.
constexpr const char* kDyingPeerRole = "conformance-dying-peer";
constexpr uint64_t kDyingPeerBytes = 1 << 20;

std::string dyingPeerArg(const ConformanceKind& kind, int gpu, const UniqueId& id) {
  std::ostringstream s;
  s << kind.name << ' ' << gpu;
  for (uint8_t b : id) s << ' ' << static_cast<int>(b);
  return s.str();
}

int dyingPeer(const std::string& arg) {
  std::istringstream s(arg);
  std::string name;
  int gpu = -1;
  s >> name >> gpu;
  UniqueId id;
  for (auto& b : id) {
    int v = 0;
    s >> v;
    b = static_cast<uint8_t>(v);
  }
  const ConformanceKind* kind = findKind(name);
  if (kind == nullptr || !s) return 2;
  if (gpu >= 0 && cudaSetDevice(gpu) != cudaSuccess) return 3;
  auto bootstrap = std::make_shared<TcpBootstrap>(1, 2);
  bootstrap->initialize(id, 30);
  Communicator comm(bootstrap);
  Connection conn = comm.connect(kind->endpoint, 0).get();
  std::unique_ptr<DeviceMemory> gpuBuffer;
  std::vector<char> hostBuffer;
  char* data = nullptr;
  if (kind->memory == MemoryKind::Gpu) {
    gpuBuffer = std::make_unique<DeviceMemory>(kDyingPeerBytes);
    data = gpuBuffer->get();
  } else {
    hostBuffer.assign(kDyingPeerBytes, 0);
    data = hostBuffer.data();
  }
  RegisteredMemory memory = comm.registerMemory(data, kDyingPeerBytes, kind->endpoint.transport);
  comm.sendMemory(memory, 0);
  bootstrap->barrier();  // connected and offered: the parent may now kill this process
  // Never returns normally: the parent kills it. Should the parent fail first, leave after a while.
  std::this_thread::sleep_for(std::chrono::seconds(120));
  return 4;
}

MSCCLPP_MP_CHILD_ROLE(kDyingPeerRole, dyingPeer);

}  // namespace

TEST_P(TransportConformanceTest, WriteAndFlushFailAfterThePeerDies) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  if (kind().peerDeathUnseen[0] != '\0') GTEST_SKIP() << kind().peerDeathUnseen;
  // Every rank has its own peer: a child process it kills. MPI only brackets the test.
  try {
    int gpu = -1;
    if (onGpu()) cudaCheck(cudaGetDevice(&gpu), "cudaGetDevice");
    const UniqueId id = TcpBootstrap::createUniqueId();
    ChildProcess child(kDyingPeerRole, dyingPeerArg(kind(), gpu, id));
    auto bootstrap = std::make_shared<TcpBootstrap>(0, 2);
    bootstrap->initialize(id, 30);
    Communicator comm(bootstrap);
    Connection conn = comm.connect(kind().endpoint, 1).get();
    KindBuffer& src = buffer(kLead + kDyingPeerBytes + kTail);
    src.fill(sourceSeed(rank, 0));
    RegisteredMemory srcMemory = registerRegion(comm, src, kDyingPeerBytes);
    RegisteredMemory peerMemory = comm.recvMemory(1).get();
    bootstrap->barrier();
    // While the peer lives the connection works: the failure below is the death's doing.
    conn.write(peerMemory, 0, srcMemory, 0, kDyingPeerBytes);
    conn.flush();
    const int status = child.kill();
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the peer ended otherwise: " << status;
    // The kernel may still accept what fits in socket buffers, but the connection must fail within a
    // bounded number of calls, with Aborted (the peer closed), never hang or accept data forever. Each
    // flush may wait out IB's RC retries (about 9 s at the timing ib_qp.cc sets) before it fails.
    constexpr int64_t kFlushTimeoutUsec = 20000000;
    int calls = 0;
    bool failed = false;
    for (; calls < 1000 && !failed; ++calls) {
      try {
        conn.write(peerMemory, 0, srcMemory, 0, kDyingPeerBytes);
        conn.flush(kFlushTimeoutUsec);
      } catch (const Error& e) {
        failed = true;
        EXPECT_EQ(e.getErrorCode(), ErrorCode::Aborted) << e.what();
      }
    }
    EXPECT_TRUE(failed) << "write and flush kept succeeding after the peer died";
    // Once failed, the connection stays failed.
    try {
      conn.write(peerMemory, 0, srcMemory, 0, 8);
      conn.flush(kFlushTimeoutUsec);
      ADD_FAILURE() << "a write after the failure was accepted and flushed";
    } catch (const Error& e) {
      EXPECT_EQ(e.getErrorCode(), ErrorCode::Aborted) << e.what();
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank " << rank << ": " << e.what();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_P(TransportConformanceTest, RepeatedSetupsLeaveFdsThreadsAndMemoryFlat) {
  MSCCLPP_CONFORMANCE_REQUIRE_KIND();
  // Each setup moves a buffer large enough that keeping it would show in the resident (or GPU) memory
  // far beyond what allocators keep cached.
  constexpr uint64_t kBytes = 8 * kMiB;
  constexpr int kCycles = 10;
  constexpr uint64_t kMemorySlack = 32 * kMiB;
  auto cycle = [&] {
    auto bootstrap = makeBootstrap();
    KindBuffer b(kind().memory, kLead + kBytes + kTail, stream());
    {
      Communicator comm(bootstrap);
      Connection conn = comm.connect(kind().endpoint, peer).get();
      RegisteredMemory mine = registerRegion(comm, b, kBytes);
      comm.sendMemory(mine, peer);
      RegisteredMemory theirs = comm.recvMemory(peer).get();
      conn.write(theirs, 0, mine, 0, kBytes / 2);
      conn.flush();
      // A semaphore too: it brings tokens of its own.
      if (kind().endpoint.device.type == DeviceType::CPU) {
        Host2HostSemaphore semaphore(comm, conn);
        bootstrap->barrier();
      } else {
        Host2DeviceSemaphore semaphore(comm, conn);
        bootstrap->barrier();
      }
    }
    bootstrap->barrier();  // the peer has dropped its view of b before b is freed
  };
  auto gpuUsed = [&]() -> uint64_t {
    if (!onGpu()) return 0;
    size_t free = 0, total = 0;
    cudaCheck(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return total - free;
  };
  try {
    // The first setups create what lasts for the process (logger, capability probe, stream pools).
    cycle();
    cycle();
    MPI_Barrier(MPI_COMM_WORLD);
    const int fds = openFdCount();
    const std::set<int> threads = threadIds();
    const uint64_t resident = residentBytes();
    const uint64_t gpu = gpuUsed();
    for (int i = 0; i < kCycles; ++i) cycle();
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(openFdCount(), fds);
    EXPECT_TRUE(newThreads(threads).empty());
    EXPECT_LE(residentBytes(), resident + kMemorySlack) << "resident memory grew over " << kCycles << " setups";
    // GPU memory is counted for the whole device, which every rank's setups share: all are at the
    // same point here.
    if (onGpu()) EXPECT_LE(gpuUsed(), gpu + kMemorySlack) << "GPU memory grew over " << kCycles << " setups";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank " << rank << ": " << e.what();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

INSTANTIATE_TEST_SUITE_P(TransportConformance, TransportConformanceTest, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<ConformanceKind>& info) { return info.param.name; });
