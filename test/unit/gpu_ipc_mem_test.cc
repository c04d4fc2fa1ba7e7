// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/gpu_ipc_mem.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mscclpp/core.hpp>
#include <mscclpp/errors.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "bootstrap/fd_service.hpp"
#include "common/env_builder.hpp"
#include "common/gpu_test.hpp"
#include "common/identity.hpp"
#include "common/serialization.hpp"
#include "gpu/driver_api.hpp"
#include "memory/ipc_import_cache.hpp"

using namespace mscclpp;

namespace {

using H = GpuIpcMemHandle;

// A handle as a cuMem export with a POSIX fd (and no fabric) would make it.
GpuIpcMemHandle posixFdHandle() {
  GpuIpcMemHandle h{};
  h.version = H::kVersion;
  h.typeFlags = H::PosixFd;
  h.notOffered[H::typeIndex(H::RuntimeIpc)] = H::NotApplicable;
  h.notOffered[H::typeIndex(H::Fabric)] = H::AllocationLacksType;
  h.deviceId = 0;
  h.pid = getpid();
  h.baseSize = 2 << 20;
  h.offsetFromBase = 64;
  h.hostHash = getHostHash();
  h.processHash = getPidHash() ^ 0x77;
  h.allocationId = 42;
  h.posixFd.service = FdServiceAddress{getHostHash(), getPidHash() ^ 0x77, 0xfffffff1u, getpid()};
  h.posixFd.fdId = 7;
  return h;
}

// A handle as a cudaMalloc export would make it, with handle bytes no driver will open.
GpuIpcMemHandle runtimeHandle() {
  GpuIpcMemHandle h = posixFdHandle();
  h.typeFlags = H::RuntimeIpc;
  h.notOffered[H::typeIndex(H::RuntimeIpc)] = H::Offered;
  h.notOffered[H::typeIndex(H::PosixFd)] = H::NotApplicable;
  h.notOffered[H::typeIndex(H::Fabric)] = H::NotApplicable;
  h.posixFd = {};
  std::memset(&h.runtimeIpc.handle, 0xab, sizeof(h.runtimeIpc.handle));
  return h;
}

std::vector<char> bytesOf(const GpuIpcMemHandle& h) {
  ByteWriter writer;
  writeGpuIpcMemHandle(writer, h);
  return writer.take();
}

GpuIpcMemHandle roundTrip(const std::vector<char>& bytes) {
  ByteReader reader(bytes, "test");
  return readGpuIpcMemHandle(reader);
}

void expectRejected(const GpuIpcMemHandle& h, const char* why) {
  try {
    roundTrip(bytesOf(h));
    ADD_FAILURE() << "accepted a handle with " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << why;
  }
}

std::string openError(const GpuIpcMemHandle& h, uint8_t permitted, ErrorCode expected) {
  try {
    GpuIpcMem::open(h, permitted);
    ADD_FAILURE() << "the open succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), expected) << e.what();
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// ---- the handle ----

TEST(GpuIpcMemHandleTest, TypeFlagsPrintAsNames) {
  EXPECT_EQ(typeFlagsToString(0), "None");
  EXPECT_EQ(typeFlagsToString(H::RuntimeIpc), "RuntimeIpc");
  EXPECT_EQ(typeFlagsToString(H::RuntimeIpc | H::PosixFd), "RuntimeIpc|PosixFd");
  EXPECT_EQ(typeFlagsToString(H::kAllTypes), "RuntimeIpc|PosixFd|Fabric");
  EXPECT_EQ(typeFlagsToString(H::Fabric | 0x10), "Fabric|0x10");
  std::ostringstream os;
  os << H::PosixFd << " " << static_cast<H::Type>(H::PosixFd | H::Fabric);
  EXPECT_EQ(os.str(), "PosixFd PosixFd|Fabric");
}

TEST(GpuIpcMemHandleTest, SerializationRoundTripsEveryByte) {
  GpuIpcMemHandle h = posixFdHandle();
  std::vector<char> bytes = bytesOf(h);
  EXPECT_EQ(bytes.size(), sizeof(GpuIpcMemHandle));
  GpuIpcMemHandle back = roundTrip(bytes);
  EXPECT_EQ(std::memcmp(&back, &h, sizeof(h)), 0);
  GpuIpcMemHandle r = roundTrip(bytesOf(runtimeHandle()));
  EXPECT_EQ(r.typeFlags, H::RuntimeIpc);
}

TEST(GpuIpcMemHandleTest, EveryTruncationIsRejected) {
  std::vector<char> bytes = bytesOf(posixFdHandle());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<char> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_THROW(roundTrip(cut), Error) << n << " bytes";
  }
}

TEST(GpuIpcMemHandleTest, TrailingBytesAreLeftForTheCallerToReject) {
  std::vector<char> bytes = bytesOf(posixFdHandle());
  bytes.push_back(0);
  ByteReader reader(bytes, "test");
  readGpuIpcMemHandle(reader);
  EXPECT_EQ(reader.remaining(), 1u);
  EXPECT_THROW(reader.expectEnd(), Error);
}

TEST(GpuIpcMemHandleTest, RandomBytesAreRejectedWithoutCrashing) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    std::vector<char> bytes(sizeof(GpuIpcMemHandle));
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_THROW(roundTrip(bytes), Error);
  }
}

TEST(GpuIpcMemHandleTest, ImpossibleFieldsAreRejected) {
  GpuIpcMemHandle h = posixFdHandle();
  h.version = 2;
  expectRejected(h, "another version");
  h = posixFdHandle();
  h.typeFlags |= 0x08;
  expectRejected(h, "an unknown type bit");
  h = posixFdHandle();
  h.typeFlags = 0;
  h.notOffered[H::typeIndex(H::PosixFd)] = H::ExcludedByConfig;
  expectRejected(h, "no type at all");
  h = posixFdHandle();
  h.typeFlags |= H::Fabric;
  expectRejected(h, "a type offered and explained away at once");
  h = posixFdHandle();
  h.notOffered[H::typeIndex(H::Fabric)] = 9;
  expectRejected(h, "an unknown not-offered reason");
  h = posixFdHandle();
  h.reserved[1] = 1;
  expectRejected(h, "reserved bytes set");
  h = posixFdHandle();
  h.reservedWord = 1;
  expectRejected(h, "the reserved word set");
  h = posixFdHandle();
  h.deviceId = -1;
  expectRejected(h, "a negative device");
  h = posixFdHandle();
  h.pid = 0;
  expectRejected(h, "pid 0");
  h = posixFdHandle();
  h.allocationId = 0;
  expectRejected(h, "allocation id 0");
  h = posixFdHandle();
  h.posixFd.fdId = 0;
  expectRejected(h, "a PosixFd payload without an fd");
}

TEST(GpuIpcMemHandleTest, ImpossibleSizesAreRejected) {
  GpuIpcMemHandle h = posixFdHandle();
  h.baseSize = 0;
  expectRejected(h, "an empty allocation");
  h = posixFdHandle();
  h.baseSize = 1ULL << 60;
  h.offsetFromBase = 0;
  expectRejected(h, "an allocation of an exabyte");
  h = posixFdHandle();
  h.offsetFromBase = h.baseSize + 1;
  expectRejected(h, "an offset past the allocation");
  h = posixFdHandle();
  h.offsetFromBase = h.baseSize;
  EXPECT_NO_THROW(roundTrip(bytesOf(h))) << "an offset at the very end is a zero-length view";
}

// ---- MSCCLPP_IPC_HANDLE_TYPES ----

TEST(IpcHandleTypesTest, ParsesNamesInAnyCaseAndOrder) {
  EXPECT_EQ(parseIpcHandleTypes(""), H::kAllTypes);
  EXPECT_EQ(parseIpcHandleTypes("all"), H::kAllTypes);
  EXPECT_EQ(parseIpcHandleTypes("runtime"), H::RuntimeIpc);
  EXPECT_EQ(parseIpcHandleTypes("posixfd,runtime"), H::RuntimeIpc | H::PosixFd);
  EXPECT_EQ(parseIpcHandleTypes(" Fabric , POSIXFD "), H::Fabric | H::PosixFd);
}

TEST(IpcHandleTypesTest, UnknownNamesGiveAClearError) {
  try {
    parseIpcHandleTypes("posix,runtime,cuda");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    std::string what = e.what();
    EXPECT_TRUE(contains(what, "MSCCLPP_IPC_HANDLE_TYPES")) << what;
    EXPECT_TRUE(contains(what, "'posix'")) << what;
    EXPECT_TRUE(contains(what, "'cuda'")) << what;
    EXPECT_FALSE(contains(what, "'runtime'")) << what;
    EXPECT_TRUE(contains(what, "runtime, posixfd, fabric")) << what;
  }
}

TEST(IpcHandleTypesTest, TheVariableReachesEnv) {
  auto e = EnvBuilder::fromMap({{"MSCCLPP_IPC_HANDLE_TYPES", "posixfd,runtime"}});
  EXPECT_EQ(e->ipcHandleTypes, "posixfd,runtime");
  EXPECT_EQ(parseIpcHandleTypes(e->ipcHandleTypes), H::RuntimeIpc | H::PosixFd);
  EXPECT_EQ(EnvBuilder::fromMap({})->ipcHandleTypes, "");
}

TEST(IpcHandleTypesTest, TheOverrideReplacesTheVariableUntilCleared) {
  const uint8_t fromEnv = parseIpcHandleTypes(env()->ipcHandleTypes);
  setPermittedIpcHandleTypes(H::PosixFd);
  EXPECT_EQ(permittedIpcHandleTypes(), H::PosixFd);
  setPermittedIpcHandleTypes(0);
  EXPECT_EQ(permittedIpcHandleTypes(), 0);
  setPermittedIpcHandleTypes(std::nullopt);
  EXPECT_EQ(permittedIpcHandleTypes(), fromEnv);
  EXPECT_THROW(setPermittedIpcHandleTypes(0x40), Error);
}

// ---- the import cache (host logic, with fake mappings) ----

namespace {

class FakeMapping : public ImportedAllocation {
 public:
  FakeMapping(std::atomic<int>& live)
      : ImportedAllocation(reinterpret_cast<void*>(0x1000), 4096, H::PosixFd), live_(live) {
    ++live_;
  }
  ~FakeMapping() override { --live_; }

 private:
  std::atomic<int>& live_;
};

}  // namespace

TEST(IpcImportCacheTest, OneKeyIsImportedOnceAndReleasedWithItsLastUser) {
  IpcImportCache& cache = IpcImportCache::instance();
  std::atomic<int> live{0}, imports{0};
  auto importer = [&] {
    ++imports;
    return std::make_unique<FakeMapping>(live);
  };
  const IpcImportKey key{1, 2, 1001};
  const IpcImportCacheStats before = cache.stats();
  auto a = cache.acquire(key, importer);
  auto b = cache.acquire(key, importer);
  EXPECT_EQ(a, b);
  EXPECT_EQ(imports.load(), 1);
  EXPECT_EQ(cache.stats().liveMappings, before.liveMappings + 1);
  EXPECT_EQ(cache.stats().hits, before.hits + 1);
  auto other = cache.acquire(IpcImportKey{1, 3, 1001}, importer);
  EXPECT_NE(other, a) << "another process's allocation is another mapping";
  EXPECT_EQ(imports.load(), 2);
  a.reset();
  EXPECT_EQ(live.load(), 2) << "b still uses it";
  b.reset();
  other.reset();
  EXPECT_EQ(live.load(), 0);
  EXPECT_EQ(cache.stats().liveMappings, before.liveMappings);
  auto again = cache.acquire(key, importer);
  EXPECT_EQ(imports.load(), 3) << "a released mapping is made anew";
}

TEST(IpcImportCacheTest, AFailedImportIsNotCachedAndCanBeRetried) {
  IpcImportCache& cache = IpcImportCache::instance();
  std::atomic<int> live{0};
  const IpcImportKey key{1, 2, 1002};
  EXPECT_THROW(
      cache.acquire(key, []() -> std::unique_ptr<ImportedAllocation> { throw Error("no", ErrorCode::Aborted); }),
      Error);
  auto ok = cache.acquire(key, [&] { return std::make_unique<FakeMapping>(live); });
  EXPECT_EQ(live.load(), 1);
}

TEST(IpcImportCacheTest, ConcurrentImportsOfOneKeyMapOnce) {
  IpcImportCache& cache = IpcImportCache::instance();
  std::atomic<int> live{0}, imports{0};
  const IpcImportKey key{1, 2, 1003};
  std::vector<std::shared_ptr<ImportedAllocation>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      got[t] = cache.acquire(key, [&] {
        ++imports;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return std::make_unique<FakeMapping>(live);
      });
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(imports.load(), 1);
  for (auto& g : got) EXPECT_EQ(g, got[0]);
}

// ---- import failures that need no GPU ----

TEST(GpuIpcMemTest, APosixFdHandleFromAnotherHostIsRefusedWithoutAnAttempt) {
  GpuIpcMemHandle h = posixFdHandle();
  h.hostHash ^= 0x1234;
  h.posixFd.service.hostHash ^= 0x1234;
  std::string what = openError(h, H::kAllTypes, ErrorCode::InvalidUsage);
  EXPECT_TRUE(contains(what, "PosixFd: refused: exported on another host")) << what;
  EXPECT_TRUE(contains(what, "Fabric: not offered")) << what;
  EXPECT_TRUE(contains(what, "RuntimeIpc: not offered")) << what;
}

TEST(GpuIpcMemTest, AnUnreachableFdServiceIsReportedWithHints) {
  const IpcImportCacheStats before = IpcImportCache::instance().stats();
  std::string what = openError(posixFdHandle(), H::kAllTypes, ErrorCode::Aborted);
  EXPECT_TRUE(contains(what, "Fabric: not offered: the allocation was created without fabric handles")) << what;
  EXPECT_TRUE(contains(what, "/dev/nvidia-caps-imex-channels")) << what;
  EXPECT_TRUE(contains(what, "PosixFd: failed")) << what;
  EXPECT_TRUE(contains(what, "no such service")) << what;
  EXPECT_TRUE(contains(what, "RuntimeIpc: not offered: cuMem memory has no runtime IPC handle")) << what;
  EXPECT_TRUE(contains(what, "Hints:")) << what;
  EXPECT_TRUE(contains(what, "fd service")) << what;
  EXPECT_EQ(IpcImportCache::instance().stats().liveMappings, before.liveMappings);
}

TEST(GpuIpcMemTest, AnUnknownFdIdIsReported) {
  auto service = FdService::acquire();
  GpuIpcMemHandle h = posixFdHandle();
  h.posixFd.service = service->address();
  h.posixFd.fdId = 987654321;
  std::string what = openError(h, H::kAllTypes, ErrorCode::Aborted);
  EXPECT_TRUE(contains(what, "UnknownId")) << what;
}

TEST(GpuIpcMemTest, TypesExcludedHereAreNotAttempted) {
  std::string what = openError(posixFdHandle(), H::RuntimeIpc | H::Fabric, ErrorCode::InvalidUsage);
  EXPECT_TRUE(contains(what, "PosixFd: not attempted: excluded by this process's MSCCLPP_IPC_HANDLE_TYPES")) << what;
}

TEST(GpuIpcMemTest, ARuntimeHandleThatDoesNotOpenIsReportedWithHints) {
  std::string what = openError(runtimeHandle(), H::kAllTypes, ErrorCode::Aborted);
  EXPECT_TRUE(contains(what, "RuntimeIpc: failed")) << what;
  EXPECT_TRUE(contains(what, "PID and IPC namespaces")) << what;
  EXPECT_TRUE(contains(what, "PosixFd: not offered: cudaMalloc memory")) << what;
}

TEST(GpuIpcMemTest, AnInvalidHandleIsRejectedBeforeAnyAttempt) {
  GpuIpcMemHandle h = posixFdHandle();
  h.offsetFromBase = h.baseSize + 8;
  openError(h, H::kAllTypes, ErrorCode::InvalidUsage);
}

TEST(GpuIpcExportTest, HostMemoryIsRefused) {
  std::vector<char> host(4096);
  try {
    GpuIpcExport::create(host.data(), host.size());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_TRUE(contains(e.what(), "not device memory")) << e.what();
  }
}

TEST(GpuIpcExportTest, AnEmptyRangeIsRefused) {
  EXPECT_THROW(GpuIpcExport::create(nullptr, 8), Error);
  int x;
  EXPECT_THROW(GpuIpcExport::create(&x, 0), Error);
}

// ---- exports on a GPU (single process; imports are tested across processes in mp_unit) ----

namespace {

bool cuMemUsable() {
  const auto& caps = gpuCapabilities();
  return caps.gpuAvailable() && caps.devices[0].virtualMemoryManagement && caps.devices[0].posixFdHandles;
}

}  // namespace

TEST(GpuIpcExportTest, CudaMallocMemoryOffersRuntimeIpcOnly) {
  MSCCLPP_REQUIRE_GPU();
  auto buf = detail::gpuCallocShared<char>(1 << 20);
  auto exp = GpuIpcExport::create(buf.get() + 4096, 1024, H::kAllTypes);
  const GpuIpcMemHandle& h = exp->handle();
  EXPECT_EQ(h.typeFlags, H::RuntimeIpc) << exp->exportLog();
  EXPECT_EQ(h.offsetFromBase, 4096u);
  EXPECT_GE(h.baseSize, 1u << 20);
  EXPECT_EQ(h.pid, getpid());
  EXPECT_TRUE(contains(exp->exportLog(), "PosixFd: not offered: cudaMalloc memory")) << exp->exportLog();
  EXPECT_NO_THROW(validateGpuIpcMemHandle(h));
}

TEST(GpuIpcExportTest, CuMemMemoryOffersPosixFdAndFabricWhereUsable) {
  MSCCLPP_REQUIRE_GPU();
  if (!cuMemUsable()) GTEST_SKIP() << "GPU 0 has no VMM with POSIX fd handles";
  auto buf = detail::gpuCallocPhysicalShared<char>(1 << 20);
  auto exp = GpuIpcExport::create(buf.get(), 1 << 20, H::kAllTypes);
  const GpuIpcMemHandle& h = exp->handle();
  EXPECT_TRUE(h.typeFlags & H::PosixFd) << exp->exportLog();
  EXPECT_EQ(bool(h.typeFlags & H::Fabric), fabricHandlesUsable(0)) << exp->exportLog();
  if (!fabricHandlesUsable(0)) {
    EXPECT_EQ(h.notOffered[H::typeIndex(H::Fabric)], H::AllocationLacksType);
    EXPECT_TRUE(contains(exp->exportLog(), "IMEX")) << exp->exportLog();
  }
  EXPECT_EQ(h.posixFd.service.processHash, getPidHash());
}

TEST(GpuIpcExportTest, APointerInsideAnAllocationRecordsItsOffset) {
  MSCCLPP_REQUIRE_GPU();
  auto buf = detail::gpuCallocShared<char>(3 << 20);
  auto whole = GpuIpcExport::create(buf.get(), 3 << 20, H::kAllTypes);
  auto inner = GpuIpcExport::create(buf.get() + (1 << 20) + 8, 100, H::kAllTypes);
  EXPECT_EQ(inner->handle().offsetFromBase, (1u << 20) + 8);
  EXPECT_EQ(inner->handle().baseSize, whole->handle().baseSize);
  EXPECT_EQ(inner->handle().allocationId, whole->handle().allocationId) << "one allocation, one export";
}

TEST(GpuIpcExportTest, ARangePastTheAllocationIsRefused) {
  MSCCLPP_REQUIRE_GPU();
  auto buf = detail::gpuCallocShared<char>(1 << 20);
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(cu::cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(buf.get())), CUDA_SUCCESS);
  EXPECT_THROW(GpuIpcExport::create(buf.get(), size + 1, H::kAllTypes), Error);
}

TEST(GpuIpcExportTest, ExportsOfOneAllocationShareOneFdUntilTheLastIsGone) {
  MSCCLPP_REQUIRE_GPU();
  if (!cuMemUsable()) GTEST_SKIP() << "GPU 0 has no VMM with POSIX fd handles";
  auto service = FdService::acquire();
  const size_t fdsBefore = service->registeredCount();
  const size_t allocationsBefore = liveGpuIpcExportAllocations();
  auto buf = detail::gpuCallocPhysicalShared<char>(1 << 20);
  auto a = GpuIpcExport::create(buf.get(), 8, H::PosixFd);
  auto b = GpuIpcExport::create(buf.get() + 64, 8, H::PosixFd);
  EXPECT_EQ(a->handle().posixFd.fdId, b->handle().posixFd.fdId);
  EXPECT_EQ(service->registeredCount(), fdsBefore + 1);
  EXPECT_EQ(liveGpuIpcExportAllocations(), allocationsBefore + 1);
  a.reset();
  EXPECT_EQ(service->registeredCount(), fdsBefore + 1);
  b.reset();
  EXPECT_EQ(service->registeredCount(), fdsBefore);
  EXPECT_EQ(liveGpuIpcExportAllocations(), allocationsBefore);
  auto c = GpuIpcExport::create(buf.get(), 8, H::PosixFd);
  EXPECT_NE(c->handle().allocationId, 0u);
  EXPECT_NE(c->handle().posixFd.fdId, 0u);
}

TEST(GpuIpcExportTest, ATypeTheMemoryLacksCannotBeForced) {
  MSCCLPP_REQUIRE_GPU();
  if (!cuMemUsable()) GTEST_SKIP() << "GPU 0 has no VMM with POSIX fd handles";
  auto buf = detail::gpuCallocPhysicalShared<char>(1 << 20);
  try {
    GpuIpcExport::create(buf.get(), 8, H::RuntimeIpc);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_TRUE(contains(e.what(), "RuntimeIpc: not offered: cuMem memory has no runtime IPC handle")) << e.what();
    EXPECT_TRUE(contains(e.what(), "PosixFd: not offered: excluded")) << e.what();
  }
}

TEST(GpuIpcExportTest, ThePermittedTypesComeFromTheOverride) {
  MSCCLPP_REQUIRE_GPU();
  auto buf = detail::gpuCallocShared<char>(1 << 20);
  setPermittedIpcHandleTypes(H::PosixFd);
  EXPECT_THROW(GpuIpcExport::create(buf.get(), 8), Error) << "cudaMalloc memory has only runtime IPC";
  setPermittedIpcHandleTypes(std::nullopt);
  if (permittedIpcHandleTypes() & H::RuntimeIpc) EXPECT_NO_THROW(GpuIpcExport::create(buf.get(), 8));
}

// ---- a RegisteredMemory carrying a CudaIpc handle (bytes written here, as a peer would send them) ----

namespace {

std::vector<char> registeredMemoryBytes(const GpuIpcMemHandle& h, uint64_t size, uint64_t transportBits,
                                        int32_t entryTransport = static_cast<int32_t>(Transport::CudaIpc),
                                        int8_t entries = 1) {
  ByteWriter w;
  w.put<uint64_t>(0x7f0000000000ULL + h.offsetFromBase).put<uint64_t>(size).put(h.hostHash).put(h.processHash);
  w.put<uint64_t>(transportBits).put<int32_t>(h.deviceId).put<int8_t>(entries);
  for (int8_t i = 0; i < entries; ++i) {
    w.put<int32_t>(entryTransport);
    writeGpuIpcMemHandle(w, h);
  }
  return w.take();
}

constexpr uint64_t kCudaIpcBit = 1ULL << static_cast<int>(Transport::CudaIpc);
constexpr uint64_t kEthernetBit = 1ULL << static_cast<int>(Transport::Ethernet);

ErrorCode deserializeError(const std::vector<char>& bytes, std::string* what = nullptr) {
  try {
    RegisteredMemory::deserialize(bytes);
  } catch (const Error& e) {
    if (what) *what = e.what();
    return e.getErrorCode();
  }
  return static_cast<ErrorCode>(-1);
}

}  // namespace

TEST(RegisteredMemoryIpcTest, APeersHandleIsImportedAndItsFailureListsEveryAttempt) {
  // A process of this host whose fd service is gone: the import is attempted and fails in detail.
  std::string what;
  EXPECT_EQ(deserializeError(registeredMemoryBytes(posixFdHandle(), 4096, kCudaIpcBit), &what), ErrorCode::Aborted);
  EXPECT_TRUE(contains(what, "PosixFd: failed")) << what;
  EXPECT_TRUE(contains(what, "Fabric: not offered")) << what;
}

TEST(RegisteredMemoryIpcTest, MemoryOfAnotherHostIsNotImported) {
  GpuIpcMemHandle h = posixFdHandle();
  h.hostHash ^= 0x99;
  RegisteredMemory m = RegisteredMemory::deserialize(registeredMemoryBytes(h, 4096, kCudaIpcBit | kEthernetBit));
  EXPECT_EQ(m.data(), nullptr);
  EXPECT_EQ(m.size(), 4096u);
  EXPECT_TRUE(m.transports().has(Transport::CudaIpc));
}

TEST(RegisteredMemoryIpcTest, InconsistentEntriesAreRejected) {
  const GpuIpcMemHandle h = posixFdHandle();
  EXPECT_EQ(deserializeError(registeredMemoryBytes(h, 4096, kEthernetBit)), ErrorCode::InvalidUsage)
      << "a CudaIpc entry for memory not registered for CudaIpc";
  EXPECT_EQ(deserializeError(
                registeredMemoryBytes(h, 4096, kCudaIpcBit | kEthernetBit, static_cast<int32_t>(Transport::Ethernet))),
            ErrorCode::InvalidUsage)
      << "an entry for a transport that adds none";
  EXPECT_EQ(deserializeError(registeredMemoryBytes(h, 4096, kCudaIpcBit, static_cast<int32_t>(Transport::CudaIpc), 2)),
            ErrorCode::InvalidUsage)
      << "two CudaIpc entries";
  EXPECT_EQ(deserializeError(registeredMemoryBytes(h, h.baseSize, kCudaIpcBit)), ErrorCode::InvalidUsage)
      << "a range past the end of the handle's allocation";
  GpuIpcMemHandle other = h;
  other.processHash ^= 1;
  std::vector<char> bytes = registeredMemoryBytes(h, 4096, kCudaIpcBit);
  std::vector<char> otherBytes = registeredMemoryBytes(other, 4096, kCudaIpcBit);
  std::copy(otherBytes.end() - sizeof(GpuIpcMemHandle), otherBytes.end(), bytes.end() - sizeof(GpuIpcMemHandle));
  EXPECT_EQ(deserializeError(bytes), ErrorCode::InvalidUsage) << "a handle of another process than the memory's";
}

TEST(RegisteredMemoryIpcTest, TruncatedOrGarbledEntriesAreRejected) {
  std::vector<char> bytes = registeredMemoryBytes(posixFdHandle(), 4096, kCudaIpcBit);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(deserializeError(std::vector<char>(bytes.begin(), bytes.begin() + n)), ErrorCode::InvalidUsage) << n;
  }
  std::mt19937 rng(7);
  const size_t handleStart = bytes.size() - sizeof(GpuIpcMemHandle);
  for (int i = 0; i < 2000; ++i) {
    std::vector<char> garbled = bytes;
    garbled[handleStart + rng() % sizeof(GpuIpcMemHandle)] ^= static_cast<char>(1 + rng() % 255);
    ErrorCode code = deserializeError(garbled);
    // A flipped byte in a payload the checks cannot judge (an fd id, a hash) still fails, at the import.
    EXPECT_TRUE(code == ErrorCode::InvalidUsage || code == ErrorCode::Aborted) << static_cast<int>(code);
  }
}
