// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// GPU memory shared between real processes: every rank exports a buffer, imports its right-hand
// neighbour's, reads it with a kernel and writes back into it; the owner then checks what arrived.
// Ranks may share one GPU (under MPS). MPI carries the handles, so that these tests depend on nothing
// but the memory layer.

#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/fd_service.hpp"
#include "common/gpu_test.hpp"
#include "common/process_stats.hpp"
#include "common/serialization.hpp"
#include "gpu/driver_api.hpp"
#include "memory/gpu_ipc_mem.hpp"
#include "memory/ipc_import_cache.hpp"
#include "memory/token_pool.hpp"
#include "mp_unit/mp_test.hpp"
#include "sync/access.hpp"

using namespace mscclpp;
using H = GpuIpcMemHandle;

namespace {

// ---- kernels ----

__host__ __device__ uint32_t pattern(uint32_t seed, size_t i) {
  return seed ^ static_cast<uint32_t>(i * 2654435761u) ^ static_cast<uint32_t>(i >> 32);
}

__global__ void fillKernel(uint32_t* p, size_t n, uint32_t seed, size_t first) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    p[i] = pattern(seed, first + i);
  }
}

__global__ void countMismatchesKernel(const uint32_t* p, size_t n, uint32_t seed, size_t first,
                                      unsigned long long* bad) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    if (p[i] != pattern(seed, first + i)) atomicAdd(bad, 1ULL);
  }
}

__global__ void storeKernel(uint64_t* const* targets, const uint64_t* values, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) *targets[i] = values[i];
  __threadfence_system();
}

bool cudaOk(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  ADD_FAILURE() << what << ": " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err) << ")";
  return false;
}

/// Writes pattern(seed, first + i) into p[i] for i < n (u32 words) and waits.
void fill(void* p, size_t n, uint32_t seed, size_t first = 0) {
  fillKernel<<<256, 256>>>(static_cast<uint32_t*>(p), n, seed, first);
  cudaOk(cudaGetLastError(), "fillKernel launch");
  cudaOk(cudaDeviceSynchronize(), "fillKernel");
}

/// Words of [p, p+n) that differ from the pattern, read by a kernel (so through the mapping).
unsigned long long mismatches(const void* p, size_t n, uint32_t seed, size_t first = 0) {
  unsigned long long* bad = nullptr;
  if (!cudaOk(cudaMalloc(&bad, sizeof(*bad)), "cudaMalloc")) return ~0ULL;
  cudaMemset(bad, 0, sizeof(*bad));
  countMismatchesKernel<<<256, 256>>>(static_cast<const uint32_t*>(p), n, seed, first, bad);
  cudaOk(cudaGetLastError(), "countMismatchesKernel launch");
  unsigned long long host = ~0ULL;
  if (cudaOk(cudaDeviceSynchronize(), "countMismatchesKernel"))
    cudaMemcpy(&host, bad, sizeof(host), cudaMemcpyDeviceToHost);
  cudaFree(bad);
  return host;
}

/// Stores values[i] into *targets[i] from a kernel.
void storeFromKernel(const std::vector<uint64_t*>& targets, const std::vector<uint64_t>& values) {
  uint64_t** dTargets = nullptr;
  uint64_t* dValues = nullptr;
  cudaMalloc(&dTargets, targets.size() * sizeof(uint64_t*));
  cudaMalloc(&dValues, values.size() * sizeof(uint64_t));
  cudaMemcpy(dTargets, targets.data(), targets.size() * sizeof(uint64_t*), cudaMemcpyHostToDevice);
  cudaMemcpy(dValues, values.data(), values.size() * sizeof(uint64_t), cudaMemcpyHostToDevice);
  const int count = static_cast<int>(targets.size());
  storeKernel<<<(count + 127) / 128, 128>>>(dTargets, dValues, count);
  cudaOk(cudaGetLastError(), "storeKernel launch");
  cudaOk(cudaDeviceSynchronize(), "storeKernel");
  cudaFree(dTargets);
  cudaFree(dValues);
}

uint64_t readWord(const uint64_t* p) {
  uint64_t v = ~0ULL;
  cudaOk(cudaMemcpy(&v, p, sizeof(v), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return v;
}

uint32_t seedOf(int rank, int round) { return 0x9e3779b9u * (rank + 1) + 0x1000193u * round; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// cuMem memory with exactly the requested handle types, mapped read-write for the current device.
class CuMemBuffer {
 public:
  CuMemBuffer(size_t bytes, unsigned handleTypes) {
    int device = 0;
    cudaGetDevice(&device);
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handleTypes);
    size_t gran = 0;
    status_ = cu::cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (status_ != CUDA_SUCCESS) return;
    size_ = (bytes + gran - 1) / gran * gran;
    CUmemGenericAllocationHandle handle;
    status_ = cu::cuMemCreate(&handle, size_, &prop, 0);
    if (status_ != CUDA_SUCCESS) return;
    status_ = cu::cuMemAddressReserve(&ptr_, size_, gran, 0, 0);
    if (status_ == CUDA_SUCCESS) status_ = cu::cuMemMap(ptr_, size_, 0, handle, 0);
    cu::cuMemRelease(handle);
    if (status_ != CUDA_SUCCESS) return;
    mapped_ = true;
    CUmemAccessDesc desc = {};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = device;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    status_ = cu::cuMemSetAccess(ptr_, size_, &desc, 1);
  }
  ~CuMemBuffer() { reset(); }
  void reset() {
    if (mapped_) cu::cuMemUnmap(ptr_, size_);
    if (ptr_) cu::cuMemAddressFree(ptr_, size_);
    mapped_ = false;
    ptr_ = 0;
  }
  bool ok() const { return status_ == CUDA_SUCCESS && mapped_; }
  CUresult status() const { return status_; }
  char* get() const { return reinterpret_cast<char*>(ptr_); }
  size_t size() const { return size_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  bool mapped_ = false;
  CUresult status_ = CUDA_ERROR_NOT_INITIALIZED;
};

bool vmmWithPosixFd() {
  const auto& caps = gpuCapabilities();
  int device = 0;
  cudaGetDevice(&device);
  return caps.devices[device].virtualMemoryManagement && caps.devices[device].posixFdHandles;
}

struct Exchanged {
  int ok;  // the rank's export succeeded
  GpuIpcMemHandle handle;
};

}  // namespace

class GpuIpcMemMpTest : public test::MultiProcessTest {
 protected:
  void TearDown() override { setPermittedIpcHandleTypes(std::nullopt); }

  /// Common start of every test: a GPU (the same answer on every rank, which share one machine), at
  /// least two ranks, and this rank's device made current.
  bool prepare() {
    if (nRanks < 2) return false;
    const int count = gpuCapabilities().deviceCount;
    cudaSetDevice(rank % count);
    return true;
  }

  int next() const { return (rank + 1) % nRanks; }
  int prev() const { return (rank + nRanks - 1) % nRanks; }
  void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

  /// Every rank's handles, carried as serialized bytes (ok=0 where a rank's export failed).
  std::vector<std::vector<std::optional<GpuIpcMemHandle>>> allGather(
      const std::vector<std::shared_ptr<GpuIpcExport>>& exports) {
    ByteWriter writer;
    for (const auto& e : exports) {
      writer.put<int32_t>(e ? 1 : 0);
      GpuIpcMemHandle h{};
      if (e) h = e->handle();
      writeGpuIpcMemHandle(writer, h);
    }
    std::vector<char> mine = writer.take();
    std::vector<char> all(mine.size() * nRanks);
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                  MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::vector<std::optional<GpuIpcMemHandle>>> out(nRanks);
    for (int r = 0; r < nRanks; ++r) {
      ByteReader reader(all.data() + r * mine.size(), mine.size(), "test handles");
      for (size_t i = 0; i < exports.size(); ++i) {
        int32_t ok = reader.get<int32_t>("ok");
        if (ok) {
          out[r].push_back(readGpuIpcMemHandle(reader));
        } else {
          reader.get<GpuIpcMemHandle>("empty handle");
          out[r].push_back(std::nullopt);
        }
      }
    }
    return out;
  }

  std::optional<GpuIpcMemHandle> neighbourHandle(const std::shared_ptr<GpuIpcExport>& exp) {
    return allGather({exp})[next()][0];
  }

  std::shared_ptr<GpuIpcExport> tryExport(void* ptr, size_t bytes, std::optional<uint8_t> types = std::nullopt) {
    try {
      return types ? GpuIpcExport::create(ptr, bytes, *types) : GpuIpcExport::create(ptr, bytes);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "export failed: " << e.what();
      return nullptr;
    }
  }

  std::shared_ptr<GpuIpcMem> tryOpen(const std::optional<GpuIpcMemHandle>& h,
                                     std::optional<uint8_t> types = std::nullopt) {
    if (!h) {
      ADD_FAILURE() << "the neighbour has no handle to offer";
      return nullptr;
    }
    try {
      return types ? GpuIpcMem::open(*h, *types) : GpuIpcMem::open(*h);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "import failed: " << e.what();
      return nullptr;
    }
  }

  /// The full round: this rank's [ptr, ptr+bytes) filled and exported, the neighbour's imported,
  /// read by a kernel, overwritten by a kernel, and the owner checks what the previous rank wrote.
  /// Returns the import (still open) so that callers can inspect it.
  std::shared_ptr<GpuIpcMem> roundTrip(void* ptr, size_t bytes, std::optional<uint8_t> exportTypes,
                                       std::optional<uint8_t> importTypes, H::Type expected) {
    const size_t words = bytes / sizeof(uint32_t);
    fill(ptr, words, seedOf(rank, 0));
    auto exp = tryExport(ptr, bytes, exportTypes);
    auto peer = tryOpen(neighbourHandle(exp), importTypes);
    if (peer) {
      EXPECT_EQ(peer->typeUsed(), expected) << peer->attemptLog();
      EXPECT_GE(peer->size(), bytes);
      EXPECT_EQ(mismatches(peer->data(), words, seedOf(next(), 0)), 0u) << "reading the neighbour's memory";
      fill(peer->data(), words, seedOf(rank, 1));
    }
    barrier();
    EXPECT_EQ(mismatches(ptr, words, seedOf(prev(), 1)), 0u) << "what the previous rank wrote into ours";
    barrier();
    return peer;
  }
};

TEST_F(GpuIpcMemMpTest, CudaMallocMemoryTravelsThroughRuntimeIpc) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  auto buf = detail::gpuCallocShared<char>(4 << 20);
  auto peer = roundTrip(buf.get(), 4 << 20, H::kAllTypes, H::kAllTypes, H::RuntimeIpc);
  if (peer) {
    EXPECT_TRUE(contains(peer->attemptLog(), "Fabric: not offered: cudaMalloc memory")) << peer->attemptLog();
    EXPECT_TRUE(contains(peer->attemptLog(), "RuntimeIpc: ok")) << peer->attemptLog();
  }
  peer.reset();
  barrier();
}

TEST_F(GpuIpcMemMpTest, CuMemWithPosixFdOnlyTravelsThroughTheFdService) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  if (!vmmWithPosixFd()) GTEST_SKIP() << "the GPU has no VMM with POSIX fd handles";
  CuMemBuffer buf(2 << 20, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  // Decided together: a rank that left alone would leave the others waiting in MPI.
  if (anyRank(!buf.ok())) GTEST_FAIL() << "cuMemCreate with POSIX fd handles: " << cuResultName(buf.status());
  auto peer = roundTrip(buf.get(), buf.size(), H::kAllTypes, H::kAllTypes, H::PosixFd);
  if (peer) {
    EXPECT_TRUE(contains(peer->attemptLog(), "Fabric: not offered: the allocation was created without fabric"))
        << peer->attemptLog();
  }
  peer.reset();
  barrier();
}

TEST_F(GpuIpcMemMpTest, CuMemRequestingFabricFallsBackToPosixFdWhereFabricIsRefused) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  if (!vmmWithPosixFd()) GTEST_SKIP() << "the GPU has no VMM with POSIX fd handles";
  int device = 0;
  cudaGetDevice(&device);
  CuMemBuffer withFabric(2 << 20, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC);
  const bool fabricAllocates = anyRank(withFabric.ok()) && !anyRank(!withFabric.ok());
  EXPECT_EQ(fabricAllocates, fabricHandlesUsable(device)) << "the capability probe agrees with a real allocation";
  if (rank == 0 && !fabricAllocates) {
    std::cout << "[rank 0] cuMemCreate with POSIX fd + fabric: " << cuResultName(withFabric.status())
              << "; exporting memory the library allocates instead\n";
  }
  // The library's own allocation requests fabric exactly where it works, as the token pool's does.
  auto buf = detail::gpuCallocPhysicalShared<char>(2 << 20);
  char* ptr = fabricAllocates ? withFabric.get() : buf.get();
  auto peer = roundTrip(ptr, 2 << 20, std::nullopt, std::nullopt, fabricAllocates ? H::Fabric : H::PosixFd);
  if (peer && !fabricAllocates) {
    EXPECT_TRUE(contains(peer->attemptLog(), "Fabric: not offered")) << peer->attemptLog();
    EXPECT_TRUE(contains(peer->attemptLog(), "IMEX")) << peer->attemptLog();
    EXPECT_TRUE(contains(peer->attemptLog(), "PosixFd: ok")) << peer->attemptLog();
  }
  peer.reset();
  barrier();
}

TEST_F(GpuIpcMemMpTest, APointerInsideAnAllocationMapsToTheSameBytes) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  for (bool cuMem : {false, true}) {
    if (cuMem && !vmmWithPosixFd()) continue;
    SCOPED_TRACE(cuMem ? "cuMem" : "cudaMalloc");
    const size_t total = 4 << 20, offset = (1 << 20) + 4096, bytes = 64 << 10;
    auto buf = cuMem ? detail::gpuCallocPhysicalShared<char>(total) : detail::gpuCallocShared<char>(total);
    fill(buf.get(), total / 4, seedOf(rank, 2));
    auto exp = tryExport(buf.get() + offset, bytes);
    if (exp) EXPECT_EQ(exp->handle().offsetFromBase, offset);
    auto peer = tryOpen(neighbourHandle(exp));
    if (peer) {
      EXPECT_EQ(static_cast<char*>(peer->data()) - static_cast<char*>(peer->base()), static_cast<ptrdiff_t>(offset));
      EXPECT_EQ(mismatches(peer->data(), bytes / 4, seedOf(next(), 2), offset / 4), 0u);
    }
    barrier();
    peer.reset();
    barrier();
  }
}

TEST_F(GpuIpcMemMpTest, EachSingleTypeCanBeForcedThroughTheSetting) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  int device = 0;
  cudaGetDevice(&device);
  for (H::Type type : {H::RuntimeIpc, H::PosixFd, H::Fabric}) {
    SCOPED_TRACE(typeFlagsToString(type));
    setPermittedIpcHandleTypes(type);
    if (type != H::RuntimeIpc && !vmmWithPosixFd()) continue;
    auto buf =
        type == H::RuntimeIpc ? detail::gpuCallocShared<char>(2 << 20) : detail::gpuCallocPhysicalShared<char>(2 << 20);
    if (type == H::Fabric && !fabricHandlesUsable(device)) {
      // Nothing can offer fabric here: the export says so instead of producing a useless handle.
      try {
        GpuIpcExport::create(buf.get(), 2 << 20);
        ADD_FAILURE() << "a fabric-only export of memory without fabric handles succeeded";
      } catch (const Error& e) {
        EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
        EXPECT_TRUE(contains(e.what(), "Fabric: not offered: the allocation was created without fabric")) << e.what();
        EXPECT_TRUE(contains(e.what(), "PosixFd: not offered: excluded")) << e.what();
      }
      continue;
    }
    auto peer = roundTrip(buf.get(), 2 << 20, std::nullopt, std::nullopt, type);
    if (peer) {
      for (H::Type other : {H::RuntimeIpc, H::PosixFd, H::Fabric}) {
        if (other != type) EXPECT_FALSE(contains(peer->attemptLog(), typeFlagsToString(other) + ": ok"));
      }
    }
    peer.reset();
    barrier();
  }
}

TEST_F(GpuIpcMemMpTest, AnImporterRestrictedToAnAbsentTypeListsEveryAttempt) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  if (!vmmWithPosixFd()) GTEST_SKIP() << "the GPU has no VMM with POSIX fd handles";
  auto buf = detail::gpuCallocPhysicalShared<char>(2 << 20);
  auto exp = tryExport(buf.get(), 2 << 20, H::kAllTypes);
  auto h = neighbourHandle(exp);
  EXPECT_TRUE(h.has_value());
  try {
    if (h) GpuIpcMem::open(*h, H::RuntimeIpc);
    ADD_FAILURE() << "opened a cuMem handle through runtime IPC";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << "nothing could be tried";
    EXPECT_TRUE(contains(e.what(), "PosixFd: not attempted: excluded")) << e.what();
    EXPECT_TRUE(contains(e.what(), "RuntimeIpc: not offered: cuMem memory")) << e.what();
    EXPECT_TRUE(contains(e.what(), "Fabric: ")) << e.what();
  }
  barrier();
}

TEST_F(GpuIpcMemMpTest, AnExportGoneBeforeTheImportIsReportedWithEveryAttempt) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  if (!vmmWithPosixFd()) GTEST_SKIP() << "the GPU has no VMM with POSIX fd handles";
  // Another export keeps this rank's fd service up, so the peer reaches it and hears "UnknownId".
  auto keeper = detail::gpuCallocPhysicalShared<char>(2 << 20);
  auto keepAlive = tryExport(keeper.get(), 8, H::PosixFd);
  auto buf = detail::gpuCallocPhysicalShared<char>(2 << 20);
  auto exp = tryExport(buf.get(), 2 << 20, H::PosixFd);
  auto h = neighbourHandle(exp);
  barrier();
  exp.reset();
  barrier();
  EXPECT_TRUE(h.has_value());
  try {
    if (h) GpuIpcMem::open(*h, H::kAllTypes);
    ADD_FAILURE() << "imported memory whose export is gone";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::Aborted) << e.what();
    EXPECT_TRUE(contains(e.what(), "Fabric: not offered")) << e.what();
    EXPECT_TRUE(contains(e.what(), "PosixFd: failed")) << e.what();
    EXPECT_TRUE(contains(e.what(), "UnknownId")) << e.what();
    EXPECT_TRUE(contains(e.what(), "RuntimeIpc: not offered")) << e.what();
    EXPECT_TRUE(contains(e.what(), "Hints:")) << e.what();
  }
  barrier();
}

TEST_F(GpuIpcMemMpTest, TheSameAllocationImportedTwiceIsMappedOnceAndReleasedInAnyOrder) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  for (int variant = 0; variant < 4; ++variant) {
    const bool cuMem = variant >= 2;
    const bool importsFirst = variant % 2 == 0;
    if (cuMem && !vmmWithPosixFd()) continue;
    SCOPED_TRACE(std::string(cuMem ? "cuMem" : "cudaMalloc") + (importsFirst ? ", imports released first" : ""));
    auto buf = cuMem ? detail::gpuCallocPhysicalShared<char>(2 << 20) : detail::gpuCallocShared<char>(2 << 20);
    fill(buf.get(), (2 << 20) / 4, seedOf(rank, 3));
    auto a = tryExport(buf.get(), 64);
    auto b = tryExport(buf.get() + 4096, 64);
    auto handles = allGather({a, b})[next()];
    const IpcImportCacheStats before = IpcImportCache::instance().stats();
    std::vector<std::shared_ptr<GpuIpcMem>> maps = {tryOpen(handles[0]), tryOpen(handles[0]), tryOpen(handles[1])};
    const IpcImportCacheStats after = IpcImportCache::instance().stats();
    EXPECT_EQ(after.imports, before.imports + 1) << "one mapping for one remote allocation";
    EXPECT_EQ(after.hits, before.hits + 2);
    EXPECT_EQ(after.liveMappings, before.liveMappings + 1);
    if (maps[0] && maps[1] && maps[2]) {
      EXPECT_EQ(maps[0]->base(), maps[1]->base());
      EXPECT_EQ(maps[0]->base(), maps[2]->base());
      EXPECT_EQ(static_cast<char*>(maps[2]->data()), static_cast<char*>(maps[0]->data()) + 4096);
    }
    barrier();
    if (!importsFirst) {
      a.reset();  // the exporter lets go of its handles while the peer still maps the memory
      b.reset();
    }
    barrier();
    // Drop two of three in a variant-dependent order; the last one must still read the memory.
    const int keep = variant % 3;
    for (int i = 0; i < 3; ++i) {
      if (i != keep) maps[i].reset();
    }
    if (maps[keep]) {
      EXPECT_EQ(IpcImportCache::instance().stats().liveMappings, before.liveMappings + 1);
      EXPECT_EQ(mismatches(maps[keep]->data(), 16, seedOf(next(), 3), keep == 2 ? 1024 : 0), 0u);
    }
    maps[keep].reset();
    EXPECT_EQ(IpcImportCache::instance().stats().liveMappings, before.liveMappings);
    barrier();
  }
}

TEST_F(GpuIpcMemMpTest, AnImportedCuMemMappingOutlivesTheExportersFree) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  if (!vmmWithPosixFd()) GTEST_SKIP() << "the GPU has no VMM with POSIX fd handles";
  auto buf = detail::gpuCallocPhysicalShared<char>(2 << 20);
  fill(buf.get(), (2 << 20) / 4, seedOf(rank, 4));
  auto exp = tryExport(buf.get(), 2 << 20);
  auto peer = tryOpen(neighbourHandle(exp));
  barrier();
  exp.reset();
  buf.reset();  // unmapped and released by its owner; the importer's mapping holds the memory
  barrier();
  if (peer) EXPECT_EQ(mismatches(peer->data(), (2 << 20) / 4, seedOf(next(), 4)), 0u);
  peer.reset();
  barrier();
}

TEST_F(GpuIpcMemMpTest, AThousandCyclesLeaveFdsMemoryAndMappingsFlat) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  const bool cuMemToo = vmmWithPosixFd();
  auto cycle = [&](int i) {
    const bool cuMem = cuMemToo && i % 2 == 0;
    auto buf = cuMem ? detail::gpuCallocPhysicalShared<char>(2 << 20) : detail::gpuCallocShared<char>(1 << 20);
    auto exp = tryExport(buf.get() + 256, 256);
    auto peer = tryOpen(neighbourHandle(exp));
    if (peer) storeFromKernel({static_cast<uint64_t*>(peer->data())}, {static_cast<uint64_t>(i)});
    peer.reset();
    barrier();
    if (exp) EXPECT_EQ(readWord(reinterpret_cast<uint64_t*>(buf.get() + 256)), static_cast<uint64_t>(i));
    exp.reset();
    buf.reset();
  };
  for (int i = 0; i < 4; ++i) cycle(i);  // warm up: contexts, streams, first-use allocations
  barrier();
  const int fdsBefore = test::openFdCount();
  const std::set<int> threadsBefore = test::threadIds();
  const size_t mappingsBefore = IpcImportCache::instance().stats().liveMappings;
  const size_t exportsBefore = liveGpuIpcExportAllocations();
  size_t freeBefore = 0, freeAfter = 0, total = 0;
  cudaMemGetInfo(&freeBefore, &total);
  barrier();
  for (int i = 0; i < 1000; ++i) {
    cycle(i);
    // Stop early, on every rank at once, once something went wrong somewhere.
    if (i % 100 == 99 && anyRank(HasFailure())) break;
  }
  barrier();
  cudaMemGetInfo(&freeAfter, &total);
  EXPECT_EQ(test::openFdCount(), fdsBefore);
  EXPECT_EQ(test::newThreads(threadsBefore).size(), 0u);
  EXPECT_EQ(IpcImportCache::instance().stats().liveMappings, mappingsBefore);
  EXPECT_EQ(liveGpuIpcExportAllocations(), exportsBefore);
  // The GPU's free memory is shared by every rank (and anything else on it); 1000 leaked cycles would
  // be gigabytes, a few MiB of drift are the driver's.
  EXPECT_LE(freeBefore - std::min(freeBefore, freeAfter), size_t(64) << 20)
      << "free before " << freeBefore << ", after " << freeAfter;
  barrier();
}

// ---- the token pool across processes ----

TEST_F(GpuIpcMemMpTest, TokensWrittenByAnotherProcessAreSeenLocallyAndComeBackZeroed) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  int device = 0;
  cudaGetDevice(&device);
  auto pool = TokenPool::create(device);
  constexpr int kTokens = 100;
  std::vector<std::shared_ptr<uint64_t>> tokens;
  std::vector<std::shared_ptr<GpuIpcExport>> exports;
  for (int i = 0; i < kTokens; ++i) {
    tokens.push_back(pool->getToken());
    exports.push_back(tryExport(tokens.back().get(), sizeof(uint64_t)));
  }
  auto theirs = allGather(exports)[next()];
  const IpcImportCacheStats before = IpcImportCache::instance().stats();
  std::vector<std::shared_ptr<GpuIpcMem>> mapped;
  std::vector<uint64_t*> targets;
  std::vector<uint64_t> values;
  for (int i = 0; i < kTokens; ++i) {
    mapped.push_back(tryOpen(theirs[i]));
    if (!mapped.back()) continue;
    targets.push_back(static_cast<uint64_t*>(mapped.back()->data()));
    values.push_back(0xabc000 + 1000 * rank + i);
  }
  EXPECT_EQ(IpcImportCache::instance().stats().imports, before.imports + 1) << "100 tokens of one chunk, one mapping";
  if (!targets.empty()) storeFromKernel(targets, values);
  barrier();
  for (int i = 0; i < kTokens; ++i) {
    EXPECT_EQ(readWord(tokens[i].get()), 0xabc000u + 1000 * prev() + i) << "token " << i;
  }
  barrier();
  mapped.clear();
  exports.clear();
  std::vector<uint64_t*> addresses;
  for (auto& t : tokens) addresses.push_back(t.get());
  tokens.clear();
  for (int i = 0; i < kTokens; ++i) tokens.push_back(pool->getToken());
  for (int i = 0; i < kTokens; ++i) {
    EXPECT_EQ(tokens[i].get(), addresses[i]) << "the same slots come back";
    EXPECT_EQ(readWord(tokens[i].get()), 0u) << "a peer's count must not survive reuse, token " << i;
  }
  barrier();
}

TEST_F(GpuIpcMemMpTest, AGrownPoolIsMappedOncePerChunkByAPeer) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  int device = 0;
  cudaGetDevice(&device);
  auto pool = TokenPool::create(device, 64);
  std::vector<std::shared_ptr<uint64_t>> tokens;
  std::vector<std::shared_ptr<GpuIpcExport>> exports;
  for (int i = 0; i < 150; ++i) {
    tokens.push_back(pool->getToken());
    exports.push_back(tryExport(tokens.back().get(), sizeof(uint64_t)));
  }
  EXPECT_EQ(pool->stats().chunks, 3u);
  auto theirs = allGather(exports)[next()];
  const IpcImportCacheStats before = IpcImportCache::instance().stats();
  std::vector<std::shared_ptr<GpuIpcMem>> mapped;
  std::vector<uint64_t*> targets;
  std::vector<uint64_t> values;
  for (int i = 0; i < 150; ++i) {
    mapped.push_back(tryOpen(theirs[i]));
    if (!mapped.back()) continue;
    targets.push_back(static_cast<uint64_t*>(mapped.back()->data()));
    values.push_back(7000 + i);
  }
  EXPECT_EQ(IpcImportCache::instance().stats().imports, before.imports + 3) << "three chunks, three mappings";
  if (!targets.empty()) storeFromKernel(targets, values);
  barrier();
  for (int i = 0; i < 150; ++i) EXPECT_EQ(readWord(tokens[i].get()), 7000u + i) << "token " << i;
  barrier();
  mapped.clear();
  barrier();
}

// ---- through the public API: RegisteredMemory, CudaIpc connections, semaphores ----

namespace {

/// Every rank's bytes (of equal length on every rank).
std::vector<std::vector<char>> allGatherBytes(const std::vector<char>& mine, int nRanks) {
  int size = static_cast<int>(mine.size()), maxSize = 0, minSize = 0;
  MPI_Allreduce(&size, &maxSize, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&size, &minSize, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(minSize, maxSize) << "serialized objects of one kind have one size";
  std::vector<char> padded(mine);
  padded.resize(maxSize);
  std::vector<char> all(static_cast<size_t>(maxSize) * nRanks);
  MPI_Allgather(padded.data(), maxSize, MPI_BYTE, all.data(), maxSize, MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<char>> out;
  for (int r = 0; r < nRanks; ++r) out.emplace_back(all.begin() + r * maxSize, all.begin() + (r + 1) * maxSize);
  return out;
}

}  // namespace

TEST_F(GpuIpcMemMpTest, RegisteredMemoryOverCudaIpcIsMappedOnceAndWrittenByAConnection) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  auto context = Context::create();
  const size_t total = 4 << 20, inner = 1 << 20, innerBytes = 64 << 10;
  auto buf = detail::gpuCallocPhysicalShared<char>(total);
  auto src = detail::gpuCallocShared<char>(innerBytes);
  fill(buf.get(), total / 4, seedOf(rank, 5));
  fill(src.get(), innerBytes / 4, seedOf(rank, 6));
  RegisteredMemory whole = context->registerMemory(buf.get(), total, Transport::CudaIpc);
  RegisteredMemory part = context->registerMemory(buf.get() + inner, innerBytes, Transport::CudaIpc);
  RegisteredMemory source = context->registerMemory(src.get(), innerBytes, Transport::CudaIpc);
  Endpoint endpoint = context->createEndpoint(Transport::CudaIpc);

  auto wholes = allGatherBytes(whole.serialize(), nRanks);
  auto parts = allGatherBytes(part.serialize(), nRanks);
  auto endpoints = allGatherBytes(endpoint.serialize(), nRanks);

  const IpcImportCacheStats before = IpcImportCache::instance().stats();
  RegisteredMemory remoteWhole, remotePart;
  try {
    remoteWhole = RegisteredMemory::deserialize(wholes[next()]);
    remotePart = RegisteredMemory::deserialize(parts[next()]);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "deserializing the neighbour's memory: " << e.what();
  }
  EXPECT_EQ(IpcImportCache::instance().stats().imports, before.imports + 1) << "two registrations, one allocation";
  EXPECT_NE(remoteWhole.data(), nullptr);
  if (remoteWhole.data() && remotePart.data()) {
    EXPECT_EQ(static_cast<char*>(remotePart.data()), static_cast<char*>(remoteWhole.data()) + inner);
    EXPECT_EQ(remotePart.size(), innerBytes);
    EXPECT_EQ(mismatches(remoteWhole.data(), total / 4, seedOf(next(), 5)), 0u);
    // The next rank's inner range is overwritten with this rank's source through a CudaIpc connection.
    try {
      Connection connection = context->connect(endpoint, Endpoint::deserialize(endpoints[next()]));
      connection.write(remotePart, 0, source, 0, innerBytes);
      connection.flush();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "writing through a CudaIpc connection: " << e.what();
    }
  }
  barrier();
  EXPECT_EQ(mismatches(buf.get() + inner, innerBytes / 4, seedOf(prev(), 6)), 0u);
  EXPECT_EQ(mismatches(buf.get(), inner / 4, seedOf(rank, 5)), 0u) << "bytes before the range are untouched";
  barrier();
}

TEST_F(GpuIpcMemMpTest, SemaphoreTokensShareOnePoolChunkAndOneImportPerPeer) {
  MSCCLPP_REQUIRE_GPU();
  if (!prepare()) GTEST_SKIP() << "needs at least 2 ranks";
  int device = 0;
  cudaGetDevice(&device);
  Communicator comm(makeBootstrap());
  std::map<int, Connection> connections;
  {
    std::map<int, std::shared_future<Connection>> futures;
    for (int peer = 0; peer < nRanks; ++peer) {
      if (peer != rank)
        futures[peer] = comm.connect(EndpointConfig(Transport::CudaIpc, Device(DeviceType::GPU, device)), peer);
    }
    for (auto& [peer, f] : futures) connections[peer] = f.get();
  }
  constexpr int kPerPeer = 32;
  const IpcImportCacheStats before = IpcImportCache::instance().stats();
  std::vector<std::pair<int, std::shared_future<Semaphore>>> futures;
  for (int i = 0; i < kPerPeer; ++i) {
    for (auto& [peer, conn] : connections) futures.emplace_back(peer, comm.buildSemaphore(conn, peer));
  }
  std::vector<std::pair<int, Semaphore>> semaphores;
  for (auto& [peer, f] : futures) {
    try {
      semaphores.emplace_back(peer, f.get());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "building a semaphore with rank " << peer << ": " << e.what();
      semaphores.emplace_back(peer, Semaphore());
    }
  }
  const ContextMemoryUsage usage = comm.context()->memoryUsage();
  EXPECT_EQ(usage.tokenPoolChunks, 1u);
  EXPECT_GE(usage.tokensInUse, static_cast<size_t>(kPerPeer * (nRanks - 1)));
  EXPECT_EQ(IpcImportCache::instance().stats().imports, before.imports + (nRanks - 1))
      << "every peer's tokens live in one chunk of its pool: one mapping per peer";

  // Through each semaphore's mapped remote token this rank stores a value the peer then finds in its
  // local token of the same semaphore.
  std::vector<uint64_t*> targets;
  std::vector<uint64_t> values;
  bool complete = true;
  for (size_t i = 0; i < semaphores.size(); ++i) {
    void* remote = SemaphoreAccess::impl(semaphores[i].second) ? semaphores[i].second.remoteMemory().data() : nullptr;
    EXPECT_NE(remote, nullptr) << "semaphore " << i;
    complete = complete && remote != nullptr;
    targets.push_back(static_cast<uint64_t*>(remote));
    values.push_back(1000000ull * (rank + 1) + i / connections.size());
  }
  if (complete) storeFromKernel(targets, values);
  barrier();
  for (size_t i = 0; complete && i < semaphores.size(); ++i) {
    const int peer = semaphores[i].first;
    EXPECT_EQ(readWord(static_cast<uint64_t*>(semaphores[i].second.localMemory().data())),
              1000000ull * (peer + 1) + i / connections.size())
        << "semaphore " << i << " with rank " << peer;
  }
  barrier();
}
