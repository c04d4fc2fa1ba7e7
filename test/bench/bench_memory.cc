// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Section "memory": what sharing GPU memory costs. Rank 0 exports, rank 1 imports (other ranks wait).
//  1. Semaphore tokens: N tokens from the pool, each exported and imported by the peer, against one
//     cuMemCreate per token (the cost the pool avoids) measured in the same run for small N.
//  2. Buffers: registration (export), import and release time per handle type and size, next to the
//     time of the allocation itself as the reference.

#include <mpi.h>

#include <algorithm>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "common/process_stats.hpp"
#include "common/serialization.hpp"
#include "memory/gpu_ipc_mem.hpp"
#include "memory/ipc_import_cache.hpp"
#include "memory/token_pool.hpp"

namespace mscclpp::bench {
namespace {

constexpr int kExporter = 0;
constexpr int kImporter = 1;
constexpr int kTag = 4711;

void sendBytes(const std::vector<char>& bytes, int peer) {
  uint64_t size = bytes.size();
  MPI_Send(&size, 1, MPI_UINT64_T, peer, kTag, MPI_COMM_WORLD);
  MPI_Send(bytes.data(), static_cast<int>(size), MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
}

std::vector<char> recvBytes(int peer) {
  uint64_t size = 0;
  MPI_Recv(&size, 1, MPI_UINT64_T, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<char> bytes(size);
  MPI_Recv(bytes.data(), static_cast<int>(size), MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

void sendDoubles(std::vector<double> values, int peer) {
  MPI_Send(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, peer, kTag, MPI_COMM_WORLD);
}

std::vector<double> recvDoubles(size_t count, int peer) {
  std::vector<double> values(count);
  MPI_Recv(values.data(), static_cast<int>(count), MPI_DOUBLE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return values;
}

size_t freeDeviceMemory() {
  size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  return free;
}

std::string fmtMs(double seconds) { return fmt(seconds * 1e3, 2); }

// A rank that fails must still play its part in every message exchange, or its peer waits forever:
// the first error is kept, the exchange goes on, and the section throws it at the end.
struct Failure {
  std::string first;
  template <typename Fn>
  void guard(Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      if (first.empty()) first = e.what();
    }
  }
};

// ---- 1. tokens ----

struct TokenResult {
  std::string scheme;
  size_t n = 0;
  size_t deviceBytes = 0;       // what the exporter allocated for the tokens
  long long memInfoDelta = 0;   // cudaMemGetInfo's view of the same
  size_t allocations = 0;       // separate device allocations (pool chunks or cuMemCreate calls)
  int exporterFds = 0;          // fds the exporter holds while the tokens are shared
  int importerFds = 0;          // fds the importer holds after importing
  double importerMappings = 0;  // mappings the importer made
  double exportSec = 0, importSec = 0, totalSec = 0;
};

// One run of N tokens: pooled, or one cuMemCreate allocation per token.
TokenResult runTokens(BenchContext& ctx, size_t n, bool pooled, int device, Failure& failure) {
  TokenResult r;
  r.scheme = pooled ? "TokenPool" : "cuMemCreate per token";
  r.n = n;
  std::shared_ptr<TokenPool> pool;
  std::vector<std::shared_ptr<uint64_t>> tokens;
  std::vector<std::shared_ptr<GpuIpcExport>> exports;
  std::vector<std::shared_ptr<GpuIpcMem>> imports;
  ctx.mpiBarrier();
  const int fdsBefore = test::openFdCount();
  const size_t freeBefore = freeDeviceMemory();
  const uint64_t importsBefore = IpcImportCache::instance().stats().imports;
  ctx.mpiBarrier();
  const double t0 = nowSec();
  if (ctx.rank == kExporter) {
    failure.guard([&] {
      if (pooled) pool = TokenPool::create(device);
      for (size_t i = 0; i < n; ++i) {
        tokens.push_back(pooled ? pool->getToken() : detail::gpuCallocPhysicalShared<uint64_t>(1));
        exports.push_back(GpuIpcExport::create(tokens.back().get(), sizeof(uint64_t)));
      }
    });
    r.exportSec = nowSec() - t0;
    ByteWriter writer;
    for (const auto& e : exports) writeGpuIpcMemHandle(writer, e->handle());
    sendBytes(writer.take(), kImporter);
    r.exporterFds = test::openFdCount() - fdsBefore;
    r.memInfoDelta = static_cast<long long>(freeBefore) - static_cast<long long>(freeDeviceMemory());
    failure.guard([&] {
      if (pooled) {
        r.deviceBytes = pool->stats().deviceBytes;
        r.allocations = pool->stats().chunks;
      } else {
        r.deviceBytes = n * detail::getCuAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        r.allocations = n;
      }
    });
  } else if (ctx.rank == kImporter) {
    std::vector<char> bytes = recvBytes(kExporter);
    const double t1 = nowSec();
    failure.guard([&] {
      ByteReader reader(bytes, "bench handles");
      while (reader.remaining() > 0) imports.push_back(GpuIpcMem::open(readGpuIpcMemHandle(reader)));
    });
    const double importSec = nowSec() - t1;
    sendDoubles({importSec, static_cast<double>(test::openFdCount() - fdsBefore),
                 static_cast<double>(IpcImportCache::instance().stats().imports - importsBefore)},
                kExporter);
  }
  ctx.mpiBarrier();
  r.totalSec = nowSec() - t0;
  if (ctx.rank == kExporter) {
    std::vector<double> fromImporter = recvDoubles(3, kImporter);
    r.importSec = fromImporter[0];
    r.importerFds = static_cast<int>(fromImporter[1]);
    r.importerMappings = fromImporter[2];
  }
  imports.clear();
  ctx.mpiBarrier();
  exports.clear();
  tokens.clear();
  pool.reset();
  ctx.mpiBarrier();
  return r;
}

Table tokensTable(BenchContext& ctx, int device, Failure& failure) {
  Table table{"semaphore tokens exported by rank 0 and imported by rank 1",
              {"scheme", "N", "device_mem", "memInfo_delta", "allocations", "exporter_fds", "importer_fds",
               "importer_mappings", "export_ms", "import_ms", "build_ms"},
              {},
              {}};
  std::vector<size_t> counts = {1, 64, 4096, 32768};
  if (ctx.quick) counts = {1, 64, 4096};
  std::vector<TokenResult> results;
  for (size_t n : counts) results.push_back(runTokens(ctx, n, true, device, failure));
  for (size_t n : {size_t(1), size_t(64)}) results.push_back(runTokens(ctx, n, false, device, failure));
  for (const TokenResult& r : results) {
    table.rows.push_back({r.scheme, std::to_string(r.n), fmtSize(r.deviceBytes),
                          fmtSize(static_cast<size_t>(std::max(0LL, r.memInfoDelta))), std::to_string(r.allocations),
                          std::to_string(r.exporterFds), std::to_string(r.importerFds), fmt(r.importerMappings, 0),
                          fmtMs(r.exportSec), fmtMs(r.importSec), fmtMs(r.totalSec)});
  }
  table.notes.push_back("build_ms: from the first allocation to the last import, handles sent over MPI in between");
  table.notes.push_back(
      "exporter_fds counts the fd service's socket and wake fd once it runs, plus one fd per exported "
      "allocation; importer fds are closed after each import");
  table.notes.push_back("memInfo_delta: cudaMemGetInfo on rank 0 (the GPU may be shared with the other ranks)");
  return table;
}

// ---- 2. buffers per handle type ----

struct Kind {
  GpuIpcMemHandle::Type type;
  bool cuMem;
};

Table buffersTable(BenchContext& ctx, int device, Failure& failure) {
  Table table{"one buffer registered for CudaIpc by rank 0 and mapped by rank 1, per handle type",
              {"type", "size", "alloc_us", "register_us", "import_us", "release_us", "iters"},
              {},
              {}};
  std::vector<size_t> sizes = {size_t(2) << 20, size_t(32) << 20, size_t(512) << 20, size_t(4) << 30};
  if (ctx.quick) sizes = {size_t(2) << 20, size_t(64) << 20};
  const DeviceCapabilities& dev = gpuCapabilities().devices[device];
  const bool cuMem = dev.virtualMemoryManagement && dev.posixFdHandles;
  const bool fabric = fabricHandlesUsable(device);
  auto context = Context::create();
  for (Kind kind : {Kind{GpuIpcMemHandle::RuntimeIpc, false}, Kind{GpuIpcMemHandle::PosixFd, true},
                    Kind{GpuIpcMemHandle::Fabric, true}}) {
    const std::string name = typeFlagsToString(kind.type);
    if (kind.cuMem && !cuMem) {
      table.notes.push_back(name + ": not measured, GPU " + std::to_string(device) +
                            " has no VMM with POSIX fd handles");
      continue;
    }
    if (kind.type == GpuIpcMemHandle::Fabric && !fabric) {
      table.notes.push_back(name + ": not measured, an allocation with fabric handles fails on GPU " +
                            std::to_string(device) + " (no IMEX channel)");
      continue;
    }
    setPermittedIpcHandleTypes(kind.type);
    for (size_t bytes : sizes) {
      const int iters = bytes >= (size_t(1) << 30) ? 3 : (ctx.quick ? 3 : 10);
      std::vector<double> alloc, reg, imp, rel;
      for (int it = 0; it < iters; ++it) {
        std::shared_ptr<char> buf;
        RegisteredMemory local;
        ctx.mpiBarrier();
        if (ctx.rank == kExporter) {
          std::vector<char> serialized;
          failure.guard([&] {
            double t0 = nowSec();
            buf = kind.cuMem ? detail::gpuCallocPhysicalShared<char>(bytes) : detail::gpuCallocShared<char>(bytes);
            double t1 = nowSec();
            local = context->registerMemory(buf.get(), bytes, Transport::CudaIpc);
            double t2 = nowSec();
            alloc.push_back(t1 - t0);
            reg.push_back(t2 - t1);
            serialized = local.serialize();
          });
          sendBytes(serialized, kImporter);
        } else if (ctx.rank == kImporter) {
          std::vector<char> serialized = recvBytes(kExporter);
          double t0 = nowSec(), t1 = t0, t2 = t0;
          if (!serialized.empty()) {
            failure.guard([&] {
              RegisteredMemory remote = RegisteredMemory::deserialize(serialized);
              t1 = nowSec();
              remote = RegisteredMemory();
              t2 = nowSec();
            });
          }
          sendDoubles({t1 - t0, t2 - t1}, kExporter);
        }
        if (ctx.rank == kExporter) {
          std::vector<double> times = recvDoubles(2, kImporter);
          imp.push_back(times[0]);
          rel.push_back(times[1]);
        }
        ctx.mpiBarrier();
        local = RegisteredMemory();
        buf.reset();
      }
      if (ctx.rank == kExporter) {
        table.rows.push_back({name, fmtSize(bytes), fmt(median(alloc) * 1e6, 1), fmt(median(reg) * 1e6, 1),
                              fmt(median(imp) * 1e6, 1), fmt(median(rel) * 1e6, 1), std::to_string(iters)});
      }
    }
  }
  setPermittedIpcHandleTypes(std::nullopt);
  table.notes.push_back(
      "medians; register = Context::registerMemory (the export), import = RegisteredMemory::deserialize "
      "(fd fetch or IPC open, then mapping), release = dropping the import (unmapping)");
  table.notes.push_back("alloc_us is the reference: the allocation itself (cudaMalloc, or cuMemCreate + map + zero)");
  return table;
}

std::vector<Table> memory(BenchContext& ctx) {
  const int device = ctx.rank % gpuCapabilities().deviceCount;
  CudaDeviceGuard guard(device);
  Failure failure;
  std::vector<Table> tables;
  tables.push_back(tokensTable(ctx, device, failure));
  tables.push_back(buffersTable(ctx, device, failure));
  if (!failure.first.empty()) throw Error(failure.first, ErrorCode::Aborted);
  return tables;
}

std::string skipReason(BenchContext& ctx) {
  const GpuCapabilities& caps = gpuCapabilities();
  if (!caps.gpuAvailable()) return caps.unavailableReason;
  if (ctx.nRanks < 2) return "needs 2 ranks: one exports, the other imports";
  return "";
}

}  // namespace

MSCCLPP_BENCH_SECTION(memory, Section{"memory",
                                      "GPU memory sharing: pooled vs per-token semaphore tokens, export/import time "
                                      "per handle type",
                                      skipReason, memory});

}  // namespace mscclpp::bench
