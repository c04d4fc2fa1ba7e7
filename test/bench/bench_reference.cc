// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The machine's own ceilings, measured in the same run as everything else: host memcpy and GPU
// device-to-device copy bandwidth. Later sections compare against these.

#include <cstring>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <vector>

#include "bench/bench.hpp"
#include "gpu/cuda_event.hpp"

namespace mscclpp::bench {
namespace {

std::vector<size_t> sizes(bool quick, size_t maxBytes) {
  std::vector<size_t> out;
  for (size_t s = 1 << 20; s <= maxBytes; s *= (quick ? 16 : 4)) out.push_back(s);
  return out;
}

std::vector<Table> hostCopy(BenchContext& ctx) {
  Table table{"host memcpy, one thread per rank, all ranks at once", {"size", "time_us", "GB/s"}, {}, {}};
  for (size_t bytes : sizes(ctx.quick, 256 << 20)) {
    std::vector<char> src(bytes, 1), dst(bytes, 0);
    std::memcpy(dst.data(), src.data(), bytes);  // fault the pages in
    const int iters = std::max(3, static_cast<int>((1ULL << 30) / bytes));
    std::vector<double> samples;
    ctx.mpiBarrier();
    for (int i = 0; i < iters; ++i) {
      double t0 = nowSec();
      std::memcpy(dst.data(), src.data(), bytes);
      samples.push_back(nowSec() - t0);
    }
    double t = median(samples);
    table.rows.push_back({fmtSize(bytes), fmt(t * 1e6, 1), fmt(bytes / t / 1e9)});
  }
  table.notes.push_back("median of repeated copies; GB/s counts the bytes once");
  return {table};
}

std::vector<Table> gpuCopy(BenchContext& ctx) {
  Table table{"cudaMemcpyAsync device-to-device on this rank's GPU", {"size", "time_us", "GB/s"}, {}, {}};
  int deviceCount = gpuCapabilities().deviceCount;
  CudaDeviceGuard guard(ctx.rank % deviceCount);
  CudaStreamWithFlags stream(cudaStreamNonBlocking);
  CudaEvent start, stop;
  for (size_t bytes : sizes(ctx.quick, size_t(1) << 30)) {
    auto src = detail::gpuCallocShared<char>(bytes);
    auto dst = detail::gpuCallocShared<char>(bytes);
    const int iters = 20;
    MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    ctx.mpiBarrier();
    MSCCLPP_CUDATHROW(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; ++i)
      MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    MSCCLPP_CUDATHROW(cudaEventRecord(stop, stream));
    MSCCLPP_CUDATHROW(cudaEventSynchronize(stop));
    float ms = 0;
    MSCCLPP_CUDATHROW(cudaEventElapsedTime(&ms, start, stop));
    double t = ms / 1e3 / iters;
    table.rows.push_back({fmtSize(bytes), fmt(t * 1e6, 1), fmt(bytes / t / 1e9)});
  }
  table.notes.push_back("GB/s counts the bytes once (read+write traffic is twice that); ranks sharing a GPU share it");
  return {table};
}

}  // namespace

MSCCLPP_BENCH_SECTION(hostCopy, Section{"host-copy", "host memcpy bandwidth (reference)", nullptr, hostCopy});

MSCCLPP_BENCH_SECTION(gpuCopy, Section{"gpu-copy", "GPU device-to-device copy bandwidth (reference)",
                                       [](BenchContext&) -> std::string {
                                         const auto& caps = gpuCapabilities();
                                         return caps.gpuAvailable() ? "" : caps.unavailableReason;
                                       },
                                       gpuCopy});

}  // namespace mscclpp::bench
