// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The IB transport in one process against the SUBSTITUTE verbs provider (no RDMA hardware): IB0 and
// IB1 are two substitute devices, so one Context connects them to each other. Discovery without any
// device, the error paths, and the faults a real fabric has (a port down, a QP in error, an error
// completion, a peer that stops or is killed mid-transfer). Each ctest entry ib_<config> runs one
// provider configuration (test/ib_substitute/CMakeLists.txt); a test skips outside its entry.

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/core.hpp>
#include <mscclpp/semaphore.hpp>
#include <numeric>
#include <thread>
#include <vector>

#include "ib_substitute/ib_test_util.hpp"
#include "memory/registered_memory.hpp"
#include "transport/context_impl.hpp"
#include "transport/ib/ib_connection.hpp"
#include "transport/ib/ibverbs.hpp"

extern char** environ;

using namespace mscclpp;
using mscclpp::test::errorOf;

namespace {

const EndpointConfig kIb0Host{Transport::IB0, DeviceType::CPU};
const EndpointConfig kIb1Host{Transport::IB1, DeviceType::CPU};

uint8_t pattern(uint32_t seed, uint64_t i) { return static_cast<uint8_t>((i * 2654435761u) >> 7 ^ seed * 77u); }

/// IB0 -> IB1 in one Context: `forward` writes from IB0 into memory registered for IB1.
struct Pair {
  std::shared_ptr<Context> context = Context::create();
  Endpoint e0, e1;
  Connection forward, backward;

  Pair(EndpointConfig c0 = kIb0Host, EndpointConfig c1 = kIb1Host) {
    e0 = context->createEndpoint(c0);
    e1 = context->createEndpoint(c1);
    forward = context->connect(e0, e1);
    backward = context->connect(e1, e0);
  }
};

bool hasAtomicsConfigured() {
  const char* v = std::getenv("MSCCLPP_IBV_SUBSTITUTE_ATOMICS");
  return v == nullptr || std::string(v) != "0";
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Discovery

TEST(IbSubstitute, DiscoveryMapsTheProviderDevicesToIb0AndIb1) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  ASSERT_EQ(getIBDeviceCount(), 2);
  EXPECT_EQ(getIBDeviceName(Transport::IB0), "substitute_0");
  EXPECT_EQ(getIBDeviceName(Transport::IB1), "substitute_1");
  EXPECT_EQ(getIBTransportByDeviceName("substitute_1"), Transport::IB1);
  bool matched = false;
  std::string what = errorOf([] { getIBDeviceName(Transport::IB2); }, ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("2 IB device(s) (substitute_0,substitute_1"), std::string::npos) << what;
  EXPECT_TRUE((errorOf([] { getIBDeviceName(Transport::CudaIpc); }, ErrorCode::InvalidUsage, &matched), matched));
  EXPECT_TRUE((errorOf([] { getIBTransportByDeviceName("mlx5_9"); }, ErrorCode::InvalidUsage, &matched), matched));
}

TEST(IbHcaDevices, HcaDevicesListDecidesWhichDeviceEachIbxOpens) {
  MSCCLPP_REQUIRE_IB_CONFIG("substitute_hca_devices");
  ASSERT_EQ(getIBDeviceCount(), 2);
  EXPECT_EQ(getIBDeviceName(Transport::IB0), "substitute_1");
  EXPECT_EQ(getIBTransportByDeviceName("substitute_0"), Transport::IB1);
  auto context = Context::create();
  Endpoint e = context->createEndpoint(kIb0Host);
  auto& state = ContextAccess::impl(*context).transportState<IbContextState>(*context, Transport::IB0);
  EXPECT_EQ(state.device()->name(), "substitute_1");
}

TEST(IbNoDevice, NoDeviceMeansCountZeroAndClearErrorsForIbTransports) {
  MSCCLPP_REQUIRE_IB_CONFIG("substitute_e");  // substitute_enosys and substitute_empty
  EXPECT_EQ(getIBDeviceCount(), 0);
  bool matched = false;
  std::string what = errorOf([] { getIBDeviceName(Transport::IB0); }, ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("IB0 has no device: there are 0 IB device(s)"), std::string::npos) << what;
  auto context = Context::create();
  what = errorOf([&] { context->createEndpoint(kIb0Host); }, ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  std::vector<char> buffer(64);
  what = errorOf([&] { context->registerMemory(buffer.data(), buffer.size(), Transport::IB3); },
                 ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("IB3 has no device"), std::string::npos) << what;
}

TEST(IbNoDevice, EnosysFromTheProviderIsTheSameAsNoDevice) {
  MSCCLPP_REQUIRE_IB_CONFIG("substitute_enosys");
  errno = 0;
  int n = -1;
  ibv_device** list = ibv().getDeviceList(&n);
  EXPECT_EQ(list, nullptr);
  EXPECT_EQ(errno, ENOSYS);
  EXPECT_EQ(getIBDeviceCount(), 0);
}

TEST(IbNoLibrary, AMissingVerbsLibraryLeavesIbUnavailableWithTheReason) {
  MSCCLPP_REQUIRE_IB_CONFIG("no_library");
  EXPECT_EQ(getIBDeviceCount(), 0);
  EXPECT_EQ(ibVerbs().table, nullptr);
  EXPECT_NE(ibVerbs().unavailableReason.find("/nonexistent/libibverbs-absent.so.1"), std::string::npos)
      << ibVerbs().unavailableReason;
  auto context = Context::create();
  bool matched = false;
  std::string what = errorOf([&] { context->createEndpoint(kIb0Host); }, ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("IB is unavailable: cannot load the verbs library"), std::string::npos) << what;
}

TEST(IbSystemVerbs, DeviceCountIsWhatTheSystemLibraryLists) {
  MSCCLPP_REQUIRE_IB_CONFIG("system_verbs");
  void* handle = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    EXPECT_EQ(getIBDeviceCount(), 0);
    EXPECT_NE(ibVerbs().unavailableReason.find("cannot load the verbs library"), std::string::npos);
    return;
  }
  auto getList = reinterpret_cast<ibv_device** (*)(int*)>(dlsym(handle, "ibv_get_device_list"));
  auto freeList = reinterpret_cast<void (*)(ibv_device**)>(dlsym(handle, "ibv_free_device_list"));
  ASSERT_NE(getList, nullptr);
  int n = 0;
  ibv_device** list = getList(&n);
  if (list == nullptr) n = 0;
  if (list != nullptr) freeList(list);
  EXPECT_EQ(ibVerbs().unavailableReason, "") << "libibverbs.so.1 loads, so the table must resolve";
  EXPECT_EQ(getIBDeviceCount(), n);
  if (n == 0) {
    auto context = Context::create();
    bool matched = false;
    std::string what = errorOf([&] { context->createEndpoint(kIb0Host); }, ErrorCode::InvalidUsage, &matched);
    EXPECT_TRUE(matched) << what;
  }
}

// ------------------------------------------------------------------------------------------------
// Configuration

TEST(IbSubstitute, GidIndexOutsideTheTableOrEmptyIsRefusedAtEndpointCreation) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  auto context = Context::create();
  EndpointConfig::Ib outside;
  outside.gidIndex = 7;
  bool matched = false;
  std::string what = errorOf(
      [&] {
        context->createEndpoint({Transport::IB0, DeviceType::CPU, -1, outside});
      },
      ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("GID index 7 is outside its table of 4"), std::string::npos) << what;
  EndpointConfig::Ib empty;
  empty.gidIndex = 2;
  what = errorOf(
      [&] {
        context->createEndpoint({Transport::IB0, DeviceType::CPU, -1, empty});
      },
      ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("GID index 2 is empty"), std::string::npos) << what;
}

TEST(IbSubstitute, ANonDefaultGidIndexConnectsAndCarriesData) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  EndpointConfig::Ib gid1;
  gid1.gidIndex = 1;
  Pair pair({Transport::IB0, DeviceType::CPU, -1, gid1}, kIb1Host);
  std::vector<uint8_t> src(4096, 0x5a), dst(4096, 0);
  RegisteredMemory srcMem = pair.context->registerMemory(src.data(), src.size(), Transport::IB0);
  RegisteredMemory dstMem = pair.context->registerMemory(dst.data(), dst.size(), Transport::IB1);
  pair.forward.write(dstMem, 0, srcMem, 0, src.size());
  pair.forward.flush();
  EXPECT_EQ(dst, src);
}

TEST(IbSubstitute, EndpointConfigSizesAreCheckedAgainstEachOtherAndTheDevice) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  auto context = Context::create();
  auto refused = [&](EndpointConfig::Ib ib, const char* expected) {
    bool matched = false;
    std::string what = errorOf(
        [&] {
          context->createEndpoint({Transport::IB0, DeviceType::CPU, -1, ib});
        },
        ErrorCode::InvalidUsage, &matched);
    EXPECT_TRUE(matched) << what;
    EXPECT_NE(what.find(expected), std::string::npos) << what;
  };
  EndpointConfig::Ib ib;
  ib.maxCqSize = 0;
  refused(ib, "maxCqSize must be positive");
  ib = {};
  ib.maxCqPollNum = -1;
  refused(ib, "maxCqPollNum must be positive");
  ib = {};
  ib.maxWrPerSend = ib.maxSendWr + 1;
  refused(ib, "exceeds maxSendWr");
  ib = {};
  ib.maxCqSize = 1 << 20;
  refused(ib, "exceeds the 65536 entries");
  ib = {};
  ib.maxSendWr = 1 << 20;
  refused(ib, "exceeds the 32768 work requests");
  ib = {};
  ib.port = 3;
  refused(ib, "has ports 1..1, not 3");
}

TEST(IbSubstitute, TinyQueuesCarryManyWritesAndUpdatesInOrder) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  // Four outstanding work requests at most, chained two at a time, polled one by one: every limit of
  // EndpointConfig::Ib is hit many times over.
  EndpointConfig::Ib tiny(-1, -1, 0, /*maxCqSize=*/4, /*maxCqPollNum=*/1, /*maxSendWr=*/4, /*maxWrPerSend=*/2);
  Pair pair({Transport::IB0, DeviceType::CPU, -1, tiny}, {Transport::IB1, DeviceType::CPU, -1, tiny});
  EXPECT_EQ(pair.forward.getMaxWriteQueueSize(), 4);
  constexpr size_t kWords = 300;
  std::vector<uint64_t> src(kWords), dst(kWords, 0);
  std::iota(src.begin(), src.end(), 1000);
  uint64_t counter = 0, inbox = 0;
  RegisteredMemory srcMem = pair.context->registerMemory(src.data(), kWords * 8, Transport::IB0);
  RegisteredMemory dstMem = pair.context->registerMemory(dst.data(), kWords * 8, Transport::IB1);
  RegisteredMemory inboxMem = pair.context->registerMemory(&inbox, 8, Transport::IB1);
  for (size_t i = 0; i < kWords; ++i) {
    pair.forward.write(dstMem, i * 8, srcMem, i * 8, 8);
    pair.forward.updateAndSync(inboxMem, 0, &counter, i + 1);
  }
  pair.forward.flush();
  EXPECT_EQ(dst, src);
  EXPECT_EQ(atomicLoad(&inbox, memoryOrderAcquire), kWords);
  EXPECT_EQ(counter, kWords);
}

TEST(IbSubstitute, UpdatesUseRdmaAtomicsExactlyWhenBothDevicesHaveThem) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  Pair pair;
  auto& conn = static_cast<IbConnection&>(*ConnectionAccess::impl(pair.forward));
  EXPECT_EQ(conn.usesAtomics(), hasAtomicsConfigured());
  // updateAndSync adds (new - old) with atomics, or stores new without: the same result either way
  // when the destination starts at the source's old value.
  uint64_t local = 5, remote = 5;
  RegisteredMemory remoteMem = pair.context->registerMemory(&remote, 8, Transport::IB1);
  pair.forward.updateAndSync(remoteMem, 0, &local, 12);
  pair.forward.flush();
  EXPECT_EQ(local, 12u);
  EXPECT_EQ(atomicLoad(&remote, memoryOrderAcquire), 12u);
}

TEST(IbSubstitute, AnEndpointConnectsOnlyOnce) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  Pair pair;
  Endpoint other = pair.context->createEndpoint(kIb1Host);
  bool matched = false;
  std::string what = errorOf([&] { pair.context->connect(pair.e0, other); }, ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("already connected"), std::string::npos) << what;
}

TEST(IbSubstitute, SerializedEndpointAndMemoryRoundTripAndRejectBadBytes) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  auto context = Context::create();
  Endpoint e = context->createEndpoint(kIb0Host);
  std::vector<char> bytes = e.serialize();
  Endpoint back = Endpoint::deserialize(bytes);
  EXPECT_EQ(back.transport(), Transport::IB0);
  std::vector<char> longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(Endpoint::deserialize(longer), Error);
  std::vector<char> shorter(bytes.begin(), bytes.end() - 1);
  EXPECT_THROW(Endpoint::deserialize(shorter), Error);
  std::vector<char> buffer(256);
  RegisteredMemory mem = context->registerMemory(buffer.data(), buffer.size(), Transport::IB0);
  std::vector<char> memBytes = mem.serialize();
  EXPECT_EQ(RegisteredMemory::deserialize(memBytes).size(), buffer.size());
  // The region's address must be the memory's own: flip a bit of the IB entry's address (the 12 bytes
  // of address and rkey end the serialized form).
  memBytes[memBytes.size() - 12] ^= 0x10;
  EXPECT_THROW(RegisteredMemory::deserialize(memBytes), Error);
}

// ------------------------------------------------------------------------------------------------
// Faults

TEST(IbSubstitute, AQpMovedToErrorFailsFlushWithSystemErrorAndStaysFailed) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  Pair pair;
  std::vector<char> src(1 << 16, 1), dst(1 << 16, 0);
  RegisteredMemory srcMem = pair.context->registerMemory(src.data(), src.size(), Transport::IB0);
  RegisteredMemory dstMem = pair.context->registerMemory(dst.data(), dst.size(), Transport::IB1);
  pair.forward.write(dstMem, 0, srcMem, 0, src.size());
  pair.forward.flush();
  test::ibSubstituteInject("qp-error");
  bool matched = false;
  // The error may already be latched by the write (a receive flushed by the QP error), else the flush finds it.
  std::string what = errorOf(
      [&] {
        pair.forward.write(dstMem, 0, srcMem, 0, src.size());
        pair.forward.flush();
      },
      ErrorCode::SystemError, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("Flushed"), std::string::npos) << what;
  // Latched: the connection keeps reporting the first error.
  EXPECT_EQ(errorOf([&] { pair.forward.write(dstMem, 0, srcMem, 0, 8); }, ErrorCode::SystemError, &matched), what);
}

TEST(IbSubstitute, ACompletionWithErrorIsReportedByFlushWithItsStatus) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  Pair pair;
  std::vector<char> src(4096, 1), dst(4096, 0);
  RegisteredMemory srcMem = pair.context->registerMemory(src.data(), src.size(), Transport::IB0);
  RegisteredMemory dstMem = pair.context->registerMemory(dst.data(), dst.size(), Transport::IB1);
  test::ibSubstituteInject("fail-next-completion");
  pair.forward.write(dstMem, 0, srcMem, 0, src.size());
  bool matched = false;
  std::string what = errorOf([&] { pair.forward.flush(); }, ErrorCode::SystemError, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("IB RDMA write failed"), std::string::npos) << what;
  EXPECT_NE(what.find("remote operation error"), std::string::npos) << what;
}

TEST(IbSubstitute, WritingIntoDeregisteredPeerMemoryIsARemoteAccessError) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  Pair pair;
  std::vector<char> src(4096, 1), dst(4096, 0);
  RegisteredMemory srcMem = pair.context->registerMemory(src.data(), src.size(), Transport::IB0);
  RegisteredMemory stale;
  {
    RegisteredMemory dstMem = pair.context->registerMemory(dst.data(), dst.size(), Transport::IB1);
    // Read while the registration lives (this process refuses bytes naming its own unregistered memory).
    stale = RegisteredMemory::deserialize(dstMem.serialize());
  }  // the region is deregistered here; the peer still holds its rkey
  pair.forward.write(stale, 0, srcMem, 0, src.size());
  bool matched = false;
  std::string what = errorOf([&] { pair.forward.flush(); }, ErrorCode::SystemError, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("remote access error"), std::string::npos) << what;
  EXPECT_EQ(dst, std::vector<char>(4096, 0));
}

namespace {

/// ib_substitute_peer as a child process with pipes; killed (if still running) on destruction.
class PeerProcess {
 public:
  explicit PeerProcess(size_t bytes) {
    int toChild[2], fromChild[2];
    if (pipe(toChild) != 0 || pipe(fromChild) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, toChild[1]);
    posix_spawn_file_actions_addclose(&actions, fromChild[0]);
    std::string size = std::to_string(bytes);
    char* argv[] = {const_cast<char*>(MSCCLPP_TEST_IB_PEER), size.data(), nullptr};
    int rc = posix_spawn(&pid_, MSCCLPP_TEST_IB_PEER, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(toChild[0]);
    close(fromChild[1]);
    in_ = toChild[1];
    out_ = fromChild[0];
    if (rc != 0) throw std::runtime_error("posix_spawn " MSCCLPP_TEST_IB_PEER);
  }
  ~PeerProcess() {
    close(in_);
    close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::vector<char> readBlob() {
    uint64_t size = 0;
    readAll(&size, sizeof(size));
    std::vector<char> blob(size);
    readAll(blob.data(), size);
    return blob;
  }
  void writeBlob(const std::vector<char>& blob) {
    uint64_t size = blob.size();
    writeAll(&size, sizeof(size));
    writeAll(blob.data(), blob.size());
  }
  void waitReady() {
    char r = 0;
    readAll(&r, 1);
    if (r != 'R') throw std::runtime_error("peer not ready");
  }
  void signal(int sig) { kill(pid_, sig); }
  void reap() {
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  void readAll(void* p, size_t n) {
    for (char* c = static_cast<char*>(p); n > 0;) {
      ssize_t r = read(out_, c, n);
      if (r <= 0) throw std::runtime_error("the peer process ended early");
      c += r;
      n -= r;
    }
  }
  void writeAll(const void* p, size_t n) {
    for (const char* c = static_cast<const char*>(p); n > 0;) {
      ssize_t r = write(in_, c, n);
      if (r <= 0) throw std::runtime_error("cannot write to the peer process");
      c += r;
      n -= r;
    }
  }
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
};

constexpr size_t kPeerBytes = 64 << 20;

}  // namespace

TEST(IbSubstitute, APeerKilledMidTransferFailsFlushWithAbortedInsteadOfHanging) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  PeerProcess peer(kPeerBytes);
  auto context = Context::create();
  Endpoint local = context->createEndpoint(kIb0Host);
  Endpoint remote = Endpoint::deserialize(peer.readBlob());
  RegisteredMemory remoteMem = RegisteredMemory::deserialize(peer.readBlob());
  peer.writeBlob(local.serialize());
  Connection connection = context->connect(local, remote);
  peer.waitReady();
  std::vector<char> src(kPeerBytes, 7);
  RegisteredMemory srcMem = context->registerMemory(src.data(), src.size(), Transport::IB0);
  connection.write(remoteMem, 0, srcMem, 0, src.size());
  connection.flush();  // the peer is alive: the first transfer completes
  for (int i = 0; i < 4; ++i) connection.write(remoteMem, 0, srcMem, 0, src.size());
  peer.signal(SIGKILL);
  peer.reap();
  bool matched = false;
  // Unanswered work requests exhaust the retries: the peer is gone, which every transport reports as Aborted.
  std::string what = errorOf([&] { connection.flush(10 * 1000 * 1000); }, ErrorCode::Aborted, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("transport retry counter exceeded"), std::string::npos) << what;
}

TEST(IbSubstitute, FlushTimesOutWhileThePeerIsStoppedAndCompletesOnceItResumes) {
  MSCCLPP_REQUIRE_IB_SUBSTITUTE();
  PeerProcess peer(kPeerBytes);
  auto context = Context::create();
  Endpoint local = context->createEndpoint(kIb0Host);
  Endpoint remote = Endpoint::deserialize(peer.readBlob());
  RegisteredMemory remoteMem = RegisteredMemory::deserialize(peer.readBlob());
  peer.writeBlob(local.serialize());
  Connection connection = context->connect(local, remote);
  peer.waitReady();
  std::vector<char> src(kPeerBytes, 9);
  RegisteredMemory srcMem = context->registerMemory(src.data(), src.size(), Transport::IB0);
  peer.signal(SIGSTOP);
  // 64 MiB cannot sit in socket buffers: with the peer stopped, the write cannot complete.
  connection.write(remoteMem, 0, srcMem, 0, src.size());
  bool matched = false;
  std::string what = errorOf([&] { connection.flush(200 * 1000); }, ErrorCode::Timeout, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("work request(s) still outstanding after 200000 us"), std::string::npos) << what;
  peer.signal(SIGCONT);
  EXPECT_NO_THROW(connection.flush(30 * 1000 * 1000));
}

// ------------------------------------------------------------------------------------------------
// Ports

TEST(IbSubstitutePorts, ADownPortIsRefusedByNameAndTheDefaultSkipsIt) {
  MSCCLPP_REQUIRE_IB_CONFIG("substitute_ports");
  auto context = Context::create();
  EndpointConfig::Ib port1;
  port1.port = 1;
  bool matched = false;
  std::string what = errorOf(
      [&] {
        context->createEndpoint({Transport::IB0, DeviceType::CPU, -1, port1});
      },
      ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("IB device substitute_0 port 1 is DOWN, not ACTIVE"), std::string::npos) << what;
  what = errorOf([&] { context->createEndpoint(kIb1Host); }, ErrorCode::InvalidUsage, &matched);
  EXPECT_TRUE(matched) << what;
  EXPECT_NE(what.find("substitute_1 has no ACTIVE port (port 1 DOWN, port 2 DOWN)"), std::string::npos) << what;
  // The default port of substitute_0 is its active port 2, which carries data (to itself).
  Endpoint a = context->createEndpoint(kIb0Host);
  Endpoint b = context->createEndpoint(kIb0Host);
  Connection ab = context->connect(a, b);
  Connection ba = context->connect(b, a);
  std::vector<char> src(1000, 3), dst(1000, 0);
  RegisteredMemory srcMem = context->registerMemory(src.data(), src.size(), Transport::IB0);
  RegisteredMemory dstMem = context->registerMemory(dst.data(), dst.size(), Transport::IB0);
  ab.write(dstMem, 0, srcMem, 0, src.size());
  ab.flush();
  EXPECT_EQ(dst, src);
}
