// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// executor: any plan file (MSCCLPP_BENCH_PLANS, a comma list, e.g. MSCCL++'s own test/execution-files
// plans; default: every plan of test/executor-plans written for this many ranks) timed in nccl-tests
// style from 1 KiB to 256 MiB, LL plans with LL16 and LL8 packets, plans without packets once ("none"),
// next to two references measured in the same run: cudaMemcpyAsync of the same bytes on this GPU (the
// bandwidth floor) and the raw flag hop between ranks 0 and 1 (the latency floor: plain volatile stores
// into the peer's mapped memory, no library code). Each time is the mean over a CUDA graph of
// back-to-back executions.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mscclpp/executor.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "common/strings.hpp"
#include "gpu/cuda_event.hpp"

namespace mscclpp::bench {

namespace {

constexpr int64_t kSpin = 1ll << 31;

__global__ void flagPingPong(volatile uint64_t* mine, volatile uint64_t* peers, uint64_t base, int rounds,
                             bool initiator, int* failed) {
  for (int i = 1; i <= rounds; ++i) {
    const uint64_t v = base + i;
    int64_t spins = 0;
    if (initiator) *peers = v;
    while (*mine < v) {
      if (++spins > kSpin) {
        *failed = 1;
        return;
      }
    }
    if (!initiator) *peers = v;
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e), ErrorCode::InternalError);
}

/// One hop in microseconds between ranks 0 and 1 (half the mean round trip); other ranks idle.
double rawHopUs(BenchContext& ctx, Communicator& comm) {
  auto flag = detail::gpuCallocShared<uint64_t>(8);
  int* failedDev = nullptr;
  check(cudaMalloc(&failedDev, sizeof(int)), "cudaMalloc");
  check(cudaMemset(failedDev, 0, sizeof(int)), "cudaMemset");
  double us = 0;
  if (ctx.rank < 2) {
    const int peer = 1 - ctx.rank;
    RegisteredMemory local = comm.registerMemory(flag.get(), 8 * sizeof(uint64_t), Transport::CudaIpc);
    comm.sendMemory(local, peer, 0x45584262);
    RegisteredMemory remote = comm.recvMemory(peer, 0x45584262).get();
    CudaStreamWithFlags stream(cudaStreamNonBlocking);
    const int rounds = ctx.quick ? 1000 : 20000;
    uint64_t base = 0;
    for (int rep = 0; rep < 2; ++rep) {  // the first is a warm-up
      comm.bootstrap()->send(nullptr, 0, peer, 0x45584263);
      comm.bootstrap()->recv(nullptr, 0, peer, 0x45584263);
      const double t0 = nowSec();
      flagPingPong<<<1, 1, 0, stream>>>(flag.get(), static_cast<uint64_t*>(remote.data()), base, rounds, ctx.rank == 0,
                                        failedDev);
      check(cudaStreamSynchronize(stream), "flagPingPong");
      us = (nowSec() - t0) * 1e6 / rounds / 2;
      base += rounds;
    }
    int failed = 0;
    check(cudaMemcpy(&failed, failedDev, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (failed) throw Error("the raw flag ping-pong gave up waiting", ErrorCode::Timeout);
    comm.bootstrap()->send(nullptr, 0, peer, 0x45584264);
    comm.bootstrap()->recv(nullptr, 0, peer, 0x45584264);
  }
  cudaFree(failedDev);
  ctx.mpiBarrier();
  return us;
}

double memcpyUs(size_t bytes, cudaStream_t stream) {
  auto src = detail::gpuCallocShared<char>(bytes);
  auto dst = detail::gpuCallocShared<char>(bytes);
  CudaEvent a, b;
  const int iters = 20;
  check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  check(cudaEventRecord(a, stream), "cudaEventRecord");
  for (int i = 0; i < iters; ++i) {
    check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  }
  check(cudaEventRecord(b, stream), "cudaEventRecord");
  check(cudaEventSynchronize(b), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  return ms * 1e3 / iters;
}

std::vector<std::string> planFiles(int nRanks) {
  std::vector<std::string> files;
  if (const char* list = std::getenv("MSCCLPP_BENCH_PLANS")) {
    for (const auto& f : splitList(list)) files.push_back(f);
    return files;
  }
  const std::string suffix = "_" + std::to_string(nRanks) + "ranks.json";
  for (const auto& e : std::filesystem::directory_iterator(MSCCLPP_TEST_PLAN_DIR)) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

float inputValue(int rank, size_t i) { return static_cast<float>((rank + 1) + (i % 5)); }

std::vector<Table> executorBench(BenchContext& ctx) {
  const int deviceCount = gpuCapabilities().deviceCount;
  check(cudaSetDevice(ctx.rank % deviceCount), "cudaSetDevice");
  auto comm = std::make_shared<Communicator>(ctx.bootstrap());
  const double hopUs = rawHopUs(ctx, *comm);
  CudaStreamWithFlags stream(cudaStreamNonBlocking);
  std::vector<Table> tables;
  for (const std::string& file : planFiles(ctx.nRanks)) {
    nlohmann::json j;
    {
      std::ifstream f(file);
      j = nlohmann::json::parse(f);
    }
    if (static_cast<int>(j["gpus"].size()) != ctx.nRanks) continue;
    const auto& g = j["gpus"][ctx.rank];
    const std::string coll = j["collective"];
    const bool inplace = j["inplace"];
    const uint64_t ic = g["input_chunks"], oc = g["output_chunks"];
    const uint64_t align = j.value("buffer_alignment", 16);
    ExecutionPlan plan(file, ctx.rank);
    // Buffers outlive the executor, whose contexts (and the peers' mappings) refer to them.
    std::vector<std::shared_ptr<char>> buffers;
    Executor executor(comm);
    const bool ll = j["protocol"] == "LL";
    // A plan without packets ignores the packet type: it runs once.
    const std::vector<PacketType> packets =
        ll ? std::vector<PacketType>{PacketType::LL16, PacketType::LL8} : std::vector<PacketType>{PacketType::LL16};
    for (PacketType pt : packets) {
      Table t{concat(j["name"].get<std::string>(), " (", file, ", ",
                     !ll                     ? "none"
                     : pt == PacketType::LL8 ? "LL8"
                                             : "LL16",
                     inplace ? ", in place" : ", out of place", ")"),
              {"size", "count", "type", "redop", "root", "time_us", "algbw_GB/s", "busbw_GB/s", "#wrong", "memcpy_us",
               "t/memcpy", "t/hop"},
              {},
              {}};
      const size_t maxSize = ctx.quick ? (size_t(1) << 20) : (size_t(256) << 20);
      uint64_t previous = 0;
      for (size_t size = 1024; size <= maxSize; size *= (ctx.quick ? 16 : 2)) {
        // The nccl-tests size (the output for all-gather, the input otherwise), rounded up to whole chunks.
        const uint64_t unit = align * (coll == "allgather" ? std::max<uint64_t>(oc, 1) : std::max<uint64_t>(ic, 1));
        const uint64_t msg = (size + unit - 1) / unit * unit;
        if (msg == previous) continue;
        previous = msg;
        const uint64_t chunk = coll == "allgather" ? msg / oc : msg / ic;
        const uint64_t in = chunk * ic, out = inplace ? in : chunk * oc;
        if (msg < plan.minMessageSize() || msg > plan.maxMessageSize()) continue;
        auto inBuf = detail::gpuCallocShared<char>(in);
        auto outBuf = inplace ? inBuf : detail::gpuCallocShared<char>(out);
        buffers.push_back(inBuf);
        buffers.push_back(outBuf);
        std::vector<float> host(in / 4);
        for (size_t i = 0; i < host.size(); ++i) host[i] = inputValue(ctx.rank, i);
        check(cudaMemcpy(inBuf.get(), host.data(), in, cudaMemcpyHostToDevice), "cudaMemcpy");
        ctx.mpiBarrier();
        executor.execute(ctx.rank, inBuf.get(), outBuf.get(), in, out, DataType::FLOAT32, plan, stream, pt);
        check(cudaStreamSynchronize(stream), "execute");
        // #wrong: elements of this rank's output that differ from the host's answer for that one run.
        std::vector<float> got(out / 4);
        check(cudaMemcpy(got.data(), outBuf.get(), out, cudaMemcpyDeviceToHost), "cudaMemcpy");
        size_t wrong = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          float want = 0;
          if (coll == "allgather") {
            want = inputValue(static_cast<int>(i / (in / 4)), i % (in / 4));
          } else {
            const size_t idx = coll == "allreduce" ? i : ctx.rank * (out / 4) + i;
            for (int r = 0; r < ctx.nRanks; ++r) want += inputValue(r, idx);
          }
          wrong += got[i] != want;
        }
        const int iters = msg >= (size_t(16) << 20) ? 10 : 50;
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
        for (int i = 0; i < iters; ++i) {
          executor.execute(ctx.rank, inBuf.get(), outBuf.get(), in, out, DataType::FLOAT32, plan, stream, pt);
        }
        check(cudaStreamEndCapture(stream, &graph), "capture");
        check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
        std::vector<double> samples;
        for (int rep = 0; rep < 4; ++rep) {
          ctx.mpiBarrier();
          const double t0 = nowSec();
          check(cudaGraphLaunch(exec, stream), "launch");
          check(cudaStreamSynchronize(stream), "graph");
          if (rep > 0) samples.push_back((nowSec() - t0) * 1e6 / iters);
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        double us = median(samples);
        double worst = 0;
        MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        const double factor =
            coll == "allreduce" ? 2.0 * (ctx.nRanks - 1) / ctx.nRanks : double(ctx.nRanks - 1) / ctx.nRanks;
        const double algbw = msg / (worst * 1e-6) / 1e9;
        const double mc = memcpyUs(msg, stream);
        t.rows.push_back({std::to_string(msg), std::to_string(msg / 4), "float", coll == "allgather" ? "none" : "sum",
                          "-1", fmt(worst, 2), fmt(algbw), fmt(algbw * factor), std::to_string(wrong), fmt(mc, 2),
                          fmt(worst / mc), hopUs > 0 ? fmt(worst / hopUs) : "-"});
      }
      t.notes.push_back(concat("raw flag hop (ranks 0-1, same run): ", fmt(hopUs, 2), " us; time = slowest rank's mean",
                               " over a CUDA graph of back-to-back executions"));
      tables.push_back(std::move(t));
    }
    check(cudaDeviceSynchronize(), "the last executions");
    ctx.mpiBarrier();
  }
  return tables;
}

}  // namespace

MSCCLPP_BENCH_SECTION(executor, Section{"executor", "execution plans in nccl-tests style vs memcpy and raw flag hop",
                                        [](BenchContext& ctx) -> std::string {
                                          const auto& caps = gpuCapabilities();
                                          if (!caps.gpuAvailable()) return caps.unavailableReason;
                                          return ctx.nRanks < 2 ? "needs at least 2 ranks" : "";
                                        },
                                        executorBench});

}  // namespace mscclpp::bench
