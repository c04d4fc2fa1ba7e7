// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// mscclpp-coll-bench: the collectives of Collectives timed the way nccl-tests times NCCL, with
// nccl-tests' options and columns (size count type redop root time algbw busbw #wrong, out-of-place
// then in-place), started under mpirun with one rank per process. Next to each time it prints a
// floor measured in the same run, and the time as a multiple of it:
// - latency floor: one raw cross-process flag hop (a store into the peer's mapped memory and the
//   peer's store back, halved) plus one empty kernel launched from a CUDA graph;
// - bandwidth floor: the bytes one rank must read and write (its input and its output) divided by
//   the copy bandwidth one rank gets while every rank copies at once (cudaMemcpyAsync device to
//   device, counted as bytes read plus bytes written).
// The floor is the larger of the two.
//
// Options: -b minBytes -e maxBytes -f factor -n iters -w warmup -c check(0/1) -G graphLaunches
// (0: eager; N: the iters calls are captured into one graph launched N times) -o op -d type -r root
// -z blocking(0/1: synchronize after every call) -g gpusPerRank (must be 1) -C collective|all
// -R register(0/1, default 1: the send and receive buffers of each size are registered with
// Collectives::registerBuffer, so that the zero-copy algorithms can run, as MSCCL++'s benchmark
// registers its buffers; 0 measures unregistered buffers, which with -G and MSCCLPP_COLL_CAPTURE_CACHE
// above 0 the captured calls register at capture where the zero-copy algorithms would run:
// docs/collectives.md, capture-time registration; the checked call is eager, so it checks the
// unregistered path). The header says which.
// -T <file>: tune instead. For every collective and size, each algorithm that the call would really
// run when forced (ll, ll2, staged, zerocopy, ce; zerocopy also on a quarter and a half of the blocks
// the library takes by default) is checked on fresh inputs and timed out of place with the same
// options (use -G for graphs); the fastest with no wrong element wins. Rank 0 prints
// each size's candidates and writes the winners, as rules for this rank count and registration, to
// <file> (the tuning table of Config::tuningFile / MSCCLPP_COLL_TUNING_FILE; src/ext/collectives/
// tuning.hpp has the format). Every rank of a later run uses rank 0's file.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/collectives.hpp>
#include <mscclpp/core.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <string>
#include <vector>

#include "common/collectives_reference.hpp"
#include "gpu/cuda_event.hpp"

using mscclpp::collectives::Collective;
using mscclpp::collectives::Collectives;
using mscclpp::collectives::DataType;
using mscclpp::collectives::ReduceOp;

namespace {

/// The seed of every rank's input (mscclpp::test::testInputs).
constexpr uint64_t kInputSeed = 1;

#define BENCH_CUDA(cmd)                                                                                  \
  do {                                                                                                   \
    cudaError_t e_ = (cmd);                                                                              \
    if (e_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #cmd, cudaGetErrorString(e_), __FILE__, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                      \
    }                                                                                                    \
  } while (0)

struct Options {
  size_t minBytes = 32 << 20, maxBytes = 32 << 20;
  double factor = 2;
  int iters = 20, warmup = 5, check = 1, graphLaunches = 0, root = 0, blocking = 0, gpus = 1, registered = 1;
  ReduceOp::Kind op = ReduceOp::Kind::Sum;
  DataType type = DataType::Float32;
  std::string coll = "allreduce";
  std::string tuneFile;  // -T: time every algorithm instead, write the winners there
};

size_t parseSize(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  switch (end && *end ? *end : 0) {
    case 'K':
    case 'k':
      v *= 1024;
      break;
    case 'M':
    case 'm':
      v *= 1024 * 1024;
      break;
    case 'G':
    case 'g':
      v *= 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  return static_cast<size_t>(v);
}

bool parseType(const std::string& s, DataType& t) {
  for (int i = 0; i < mscclpp::collectives::NumDataTypes; ++i) {
    if (s == mscclpp::collectives::dataTypeName(static_cast<DataType>(i))) {
      t = static_cast<DataType>(i);
      return true;
    }
  }
  return false;
}

bool parseOp(const std::string& s, ReduceOp::Kind& k) {
  for (int i = 0; i <= static_cast<int>(ReduceOp::Kind::PreMulSum); ++i) {
    if (s == mscclpp::collectives::reduceOpName(static_cast<ReduceOp::Kind>(i))) {
      k = static_cast<ReduceOp::Kind>(i);
      return true;
    }
  }
  return false;
}

Options parse(int argc, char** argv, int rank) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&]() {
      if (!v) {
        if (rank == 0) std::fprintf(stderr, "option %s needs a value\n", a.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      ++i;
      return v;
    };
    if (a == "-b")
      o.minBytes = parseSize(need());
    else if (a == "-e")
      o.maxBytes = parseSize(need());
    else if (a == "-f")
      o.factor = std::atof(need());
    else if (a == "-n")
      o.iters = std::atoi(need());
    else if (a == "-w")
      o.warmup = std::atoi(need());
    else if (a == "-c")
      o.check = std::atoi(need());
    else if (a == "-G")
      o.graphLaunches = std::atoi(need());
    else if (a == "-r")
      o.root = std::atoi(need());
    else if (a == "-z")
      o.blocking = std::atoi(need());
    else if (a == "-g")
      o.gpus = std::atoi(need());
    else if (a == "-R")
      o.registered = std::atoi(need());
    else if (a == "-C")
      o.coll = need();
    else if (a == "-T")
      o.tuneFile = need();
    else if (a == "-d") {
      if (!parseType(need(), o.type)) {
        if (rank == 0) std::fprintf(stderr, "unknown type %s\n", v);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else if (a == "-o") {
      if (!parseOp(need(), o.op)) {
        if (rank == 0) std::fprintf(stderr, "unknown op %s\n", v);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else {
      if (rank == 0)
        std::fprintf(stderr, "unknown option %s (see the comment at the top of coll_bench.cu)\n", a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (o.gpus != 1) {
    if (rank == 0) std::fprintf(stderr, "-g: one GPU per rank; start more ranks instead\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return o;
}

// ---- floors ----

__global__ void emptyKernel() {}

/// Rank `initiator` stores i into the peer's flag and waits for the peer's store of i into its own;
/// the other rank waits, then answers.
__global__ void pingPongKernel(uint64_t* mine, uint64_t* peers, int iters, bool initiator) {
  for (int i = 1; i <= iters; ++i) {
    if (initiator) mscclpp::atomicStore<uint64_t, mscclpp::scopeSystem>(peers, i, mscclpp::memoryOrderRelaxed);
    while (mscclpp::atomicLoad<uint64_t, mscclpp::scopeSystem>(mine, mscclpp::memoryOrderRelaxed) <
           static_cast<uint64_t>(i)) {
    }
    if (!initiator) mscclpp::atomicStore<uint64_t, mscclpp::scopeSystem>(peers, i, mscclpp::memoryOrderRelaxed);
  }
}

double flagHopUs(mscclpp::Communicator& comm, int rank, int nRanks, cudaStream_t stream) {
  if (nRanks < 2) return 0;
  double us = 0;
  mscclpp::GpuBuffer<uint64_t> flag(2);
  if (rank <= 1) {
    const int peer = 1 - rank;
    auto local = comm.registerMemory(flag.data(), flag.bytes(), mscclpp::Transport::CudaIpc);
    comm.sendMemory(local, peer, 77);
    auto remote = comm.recvMemory(peer, 77).get();
    const int iters = 2000;
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &pair);
    MPI_Barrier(pair);
    mscclpp::CudaEvent a, b;
    BENCH_CUDA(cudaEventRecord(a, stream));
    pingPongKernel<<<1, 1, 0, stream>>>(flag.data(), static_cast<uint64_t*>(remote.data()), iters, rank == 0);
    BENCH_CUDA(cudaEventRecord(b, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    us = ms * 1000.0 / (2.0 * iters);
    MPI_Barrier(pair);
    MPI_Comm_free(&pair);
  } else {
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, &pair);
  }
  MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return us;
}

double emptyGraphKernelUs(cudaStream_t stream) {
  const int n = 1000;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BENCH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  emptyKernel<<<1, 1, 0, stream>>>();
  BENCH_CUDA(cudaStreamEndCapture(stream, &graph));
  BENCH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 10; ++i) BENCH_CUDA(cudaGraphLaunch(exec, stream));
  mscclpp::CudaEvent a, b;
  BENCH_CUDA(cudaEventRecord(a, stream));
  for (int i = 0; i < n; ++i) BENCH_CUDA(cudaGraphLaunch(exec, stream));
  BENCH_CUDA(cudaEventRecord(b, stream));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  float ms = 0;
  BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  double us = ms * 1000.0 / n, worst = 0;
  MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

/// Bytes read plus written per second that one rank gets while every rank copies at once.
double copyBandwidth(cudaStream_t stream) {
  const size_t bytes = 256 << 20;
  void *src = nullptr, *dst = nullptr;
  BENCH_CUDA(cudaMalloc(&src, bytes));
  BENCH_CUDA(cudaMalloc(&dst, bytes));
  BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);
  mscclpp::CudaEvent a, b;
  const int reps = 10;
  BENCH_CUDA(cudaEventRecord(a, stream));
  for (int i = 0; i < reps; ++i) BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  BENCH_CUDA(cudaEventRecord(b, stream));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  float ms = 0;
  BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
  (void)cudaFree(src);
  (void)cudaFree(dst);
  double bw = 2.0 * bytes * reps / (ms * 1e-3), least = 0;
  MPI_Allreduce(&bw, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return least;
}

// ---- collectives ----

struct CollInfo {
  Collective coll;
  const char* name;
  bool reduces;
  bool rooted;
};

const CollInfo kColls[] = {
    {Collective::AllReduce, "allreduce", true, false},
    {Collective::AllGather, "allgather", false, false},
    {Collective::ReduceScatter, "reducescatter", true, false},
    {Collective::Broadcast, "broadcast", false, true},
    {Collective::Reduce, "reduce", true, true},
    {Collective::AllToAll, "alltoall", false, false},
    {Collective::Gather, "gather", false, true},
    {Collective::Scatter, "scatter", false, true},
    {Collective::SendRecv, "sendrecv", false, false},
};

/// nccl-tests' conventions: `size` is the bytes of the larger buffer; count is per rank's part.
struct Shape {
  uint64_t count = 0;  // the count argument of the call
  uint64_t sendElems = 0;
  uint64_t recvElems = 0;
  double busFactor = 1;
  double floorBytes = 0;  // bytes one rank must read plus write
};

Shape shapeOf(Collective c, size_t bytes, size_t es, int n) {
  Shape s;
  const uint64_t total = bytes / es;
  switch (c) {
    case Collective::AllReduce:
      s.count = s.sendElems = s.recvElems = total;
      s.busFactor = 2.0 * (n - 1) / n;
      break;
    case Collective::AllGather:
    case Collective::Gather:
      s.count = total / n;
      s.sendElems = s.count;
      s.recvElems = s.count * n;
      s.busFactor = c == Collective::AllGather ? (n - 1.0) / n : 1;
      break;
    case Collective::ReduceScatter:
    case Collective::Scatter:
      s.count = total / n;
      s.sendElems = s.count * n;
      s.recvElems = s.count;
      s.busFactor = c == Collective::ReduceScatter ? (n - 1.0) / n : 1;
      break;
    case Collective::AllToAll:
      s.count = total / n;
      s.sendElems = s.recvElems = s.count * n;
      s.busFactor = (n - 1.0) / n;
      break;
    default:
      s.count = s.sendElems = s.recvElems = total;
      s.busFactor = 1;
      break;
  }
  s.floorBytes = static_cast<double>((s.sendElems + s.recvElems) * es);
  return s;
}

/// The algorithms -T times, each forced on its own object.
const mscclpp::collectives::Algorithm kTuneCandidates[] = {
    mscclpp::collectives::Algorithm::LLOneShot, mscclpp::collectives::Algorithm::LLTwoShot,
    mscclpp::collectives::Algorithm::Staged, mscclpp::collectives::Algorithm::ZeroCopy,
    mscclpp::collectives::Algorithm::CopyEngine};

/// One thing -T times: an algorithm forced on an object of its own, and for zero-copy a block count
/// (0: the library's default). A zero-copy object of fewer blocks runs what a tuning rule's block
/// count makes the default object run (src/ext/collectives/tuning.hpp says why).
struct TuneCandidate {
  mscclpp::collectives::Algorithm algorithm;
  uint32_t blocks;
  std::unique_ptr<Collectives> object;

  std::string name() const {
    return std::string(mscclpp::collectives::algorithmName(algorithm)) + (blocks ? "/" + std::to_string(blocks) : "");
  }
};

struct Bench {
  Options o;
  int rank = 0, nRanks = 1;
  std::unique_ptr<Collectives> coll;
  Collectives* active = nullptr;          // the object calls go to: coll, or a tuning candidate
  std::vector<TuneCandidate> candidates;  // -T: what it times
  std::string tuned;                      // -T: the rules found so far
  cudaStream_t stream = nullptr;
  double hopUs = 0, kernelUs = 0, copyBw = 0;

  void issue(const CollInfo& ci, const Shape& s, const char* send, char* recv, const ReduceOp& op) {
    switch (ci.coll) {
      case Collective::AllReduce:
        active->allReduce(send, recv, s.count, o.type, op, stream);
        break;
      case Collective::AllGather:
        active->allGather(send, recv, s.count, o.type, stream);
        break;
      case Collective::ReduceScatter:
        active->reduceScatter(send, recv, s.count, o.type, op, stream);
        break;
      case Collective::Broadcast:
        active->broadcast(send, recv, s.count, o.type, o.root, stream);
        break;
      case Collective::Reduce:
        active->reduce(send, recv, s.count, o.type, op, o.root, stream);
        break;
      case Collective::AllToAll:
        active->allToAll(send, recv, s.count, o.type, stream);
        break;
      case Collective::Gather:
        active->gather(send, recv, s.count, o.type, o.root, stream);
        break;
      case Collective::Scatter:
        active->scatter(send, recv, s.count, o.type, o.root, stream);
        break;
      case Collective::SendRecv: {
        // nccl-tests' sendrecv: every rank sends to the next and receives from the previous.
        active->groupStart();
        active->send(send, s.count, o.type, (rank + 1) % nRanks, stream);
        active->recv(recv, s.count, o.type, (rank + nRanks - 1) % nRanks, stream);
        active->groupEnd();
        break;
      }
      default:
        break;
    }
  }

  /// Microseconds per call (the slowest rank's).
  double time(const CollInfo& ci, const Shape& s, const char* send, char* recv, const ReduceOp& op) {
    for (int i = 0; i < o.warmup; ++i) issue(ci, s, send, recv, op);
    BENCH_CUDA(cudaStreamSynchronize(stream));
    MPI_Barrier(MPI_COMM_WORLD);
    mscclpp::CudaEvent a, b;
    double calls = o.iters;
    if (o.graphLaunches > 0) {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      BENCH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      for (int i = 0; i < o.iters; ++i) issue(ci, s, send, recv, op);
      BENCH_CUDA(cudaStreamEndCapture(stream, &graph));
      BENCH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
      BENCH_CUDA(cudaGraphLaunch(exec, stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));
      MPI_Barrier(MPI_COMM_WORLD);
      BENCH_CUDA(cudaEventRecord(a, stream));
      for (int g = 0; g < o.graphLaunches; ++g) BENCH_CUDA(cudaGraphLaunch(exec, stream));
      BENCH_CUDA(cudaEventRecord(b, stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));
      calls = static_cast<double>(o.iters) * o.graphLaunches;
      (void)cudaGraphExecDestroy(exec);
      (void)cudaGraphDestroy(graph);
    } else {
      BENCH_CUDA(cudaEventRecord(a, stream));
      for (int i = 0; i < o.iters; ++i) {
        issue(ci, s, send, recv, op);
        if (o.blocking) BENCH_CUDA(cudaStreamSynchronize(stream));
      }
      BENCH_CUDA(cudaEventRecord(b, stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));
    }
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    double us = ms * 1000.0 / calls, worst = 0;
    MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
  }

  /// Elements of this rank's output that differ from the host reference (summed over ranks).
  long long wrong(const CollInfo& ci, const Shape& s, const std::vector<std::vector<char>>& inputs,
                  const std::vector<char>& got, const ReduceOp& op, const std::vector<char>& scalar) {
    const size_t es = mscclpp::collectives::dataTypeSize(o.type);
    std::vector<char> want(got.size());
    bool check = true;
    // The inputs are inputsFor's (kInputSeed), and every rank passes the same scalar.
    auto reduceInto = [&](uint64_t base) {
      mscclpp::test::TestInputReduction(o.type, o.op, nRanks, kInputSeed,
                                        std::vector<std::vector<char>>(nRanks, scalar))
          .fill(base, s.count, want.data());
    };
    const uint64_t part = s.count * es;
    switch (ci.coll) {
      case Collective::AllReduce:
        reduceInto(0);
        break;
      case Collective::ReduceScatter:
        reduceInto(rank * s.count);
        break;
      case Collective::Reduce:
        check = rank == o.root;
        if (check) reduceInto(0);
        break;
      case Collective::AllGather:
        for (int q = 0; q < nRanks; ++q) std::memcpy(want.data() + q * part, inputs[q].data(), part);
        break;
      case Collective::Gather:
        check = rank == o.root;
        if (check)
          for (int q = 0; q < nRanks; ++q) std::memcpy(want.data() + q * part, inputs[q].data(), part);
        break;
      case Collective::Broadcast:
        std::memcpy(want.data(), inputs[o.root].data(), part);
        break;
      case Collective::Scatter:
        std::memcpy(want.data(), inputs[o.root].data() + rank * part, part);
        break;
      case Collective::AllToAll:
        for (int q = 0; q < nRanks; ++q) std::memcpy(want.data() + q * part, inputs[q].data() + rank * part, part);
        break;
      case Collective::SendRecv:
        std::memcpy(want.data(), inputs[(rank + nRanks - 1) % nRanks].data(), part);
        break;
      default:
        break;
    }
    long long bad = 0;
    if (check)
      bad = static_cast<long long>(mscclpp::test::mismatches(o.type, got.data(), want.data(), got.size() / es));
    long long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }

  /// Every rank's input for a call of shape `s`, the PreMulSum scalar (2, the same on every rank) and
  /// the reduction the options name.
  struct Inputs {
    std::vector<std::vector<char>> perRank;
    std::vector<char> scalar;
    ReduceOp op;
  };
  Inputs inputsFor(const Shape& s) const {
    const size_t es = mscclpp::collectives::dataTypeSize(o.type);
    Inputs in;
    in.perRank.resize(nRanks);
    for (int q = 0; q < nRanks; ++q) in.perRank[q] = mscclpp::test::testInputs(o.type, q, s.sendElems, kInputSeed);
    in.scalar.resize(es);
    mscclpp::test::fromDouble(o.type, 2.0, in.scalar.data());
    // The host scalar is copied into the op, so `in` may move.
    in.op = o.op == ReduceOp::Kind::PreMulSum ? ReduceOp::preMulSumHost(in.scalar.data(), o.type) : ReduceOp(o.op);
    return in;
  }

  /// -T: every candidate at every size, the winners appended to `tuned` as rules.
  void tune(const CollInfo& ci) {
    using mscclpp::collectives::Algorithm;
    const size_t es = mscclpp::collectives::dataTypeSize(o.type);
    if (rank == 0) {
      std::printf(
          "#\n# tuning %s, %d ranks, %s mode, %s buffers: us per call (out of place), - where the\n"
          "# algorithm does not run this call\n#%11s",
          ci.name, nRanks, o.graphLaunches > 0 ? "CUDA graph" : "eager", o.registered ? "registered" : "unregistered",
          "size");
      for (const TuneCandidate& c : candidates) std::printf(" %11s", c.name().c_str());
      std::printf("  winner\n");
    }
    const TuneCandidate* previous = nullptr;
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes;
         bytes = std::max(bytes + 1, static_cast<size_t>(bytes * o.factor))) {
      const Shape s = shapeOf(ci.coll, bytes, es, nRanks);
      const size_t segBytes = s.count * es;  // what the selection sees
      const Inputs in = inputsFor(s);
      const std::vector<std::vector<char>>& inputs = in.perRank;
      const std::vector<char>& scalar = in.scalar;
      const ReduceOp& op = in.op;
      char *send = nullptr, *recv = nullptr;
      const size_t sendBytes = std::max<size_t>(s.sendElems * es, 1), recvBytes = std::max<size_t>(s.recvElems * es, 1);
      BENCH_CUDA(cudaMalloc(&send, sendBytes));
      BENCH_CUDA(cudaMalloc(&recv, recvBytes));
      std::vector<double> times;
      const TuneCandidate* best = nullptr;
      double bestUs = 0;
      for (const TuneCandidate& candidate : candidates) {
        active = candidate.object.get();
        if (active->algorithmFor(ci.coll, segBytes, o.registered != 0) != candidate.algorithm) {
          times.push_back(-1);
          continue;
        }
        if (o.registered) {
          active->registerBuffer(send, sendBytes);
          active->registerBuffer(recv, recvBytes);
        }
        if (s.sendElems) {
          BENCH_CUDA(cudaMemcpyAsync(send, inputs[rank].data(), s.sendElems * es, cudaMemcpyHostToDevice, stream));
        }
        issue(ci, s, send, recv, op);
        BENCH_CUDA(cudaStreamSynchronize(stream));
        std::vector<char> got(s.recvElems * es);
        if (!got.empty()) BENCH_CUDA(cudaMemcpy(got.data(), recv, got.size(), cudaMemcpyDeviceToHost));
        const bool right = wrong(ci, s, inputs, got, op, scalar) == 0;
        const double us = time(ci, s, send, recv, op);
        if (o.registered) {
          active->deregisterBuffer(send);
          active->deregisterBuffer(recv);
        }
        times.push_back(right ? us : -2);
        if (right && (best == nullptr || us < bestUs)) {
          best = &candidate;
          bestUs = us;
        }
      }
      (void)cudaFree(send);
      (void)cudaFree(recv);
      active = coll.get();
      if (rank != 0) continue;
      std::printf(" %11zu", bytes);
      for (double t : times) {
        if (t >= 0) {
          std::printf(" %11.2f", t);
        } else {
          std::printf(" %11s", t == -1 ? "-" : "WRONG");
        }
      }
      std::printf("  %s\n", best ? best->name().c_str() : "none");
      std::fflush(stdout);
      // One rule where the winner changes; the first covers everything below the smallest size too.
      if (best != nullptr && best != previous) {
        tuned += std::string(ci.name) + " " + std::to_string(nRanks) + " " +
                 std::to_string(previous == nullptr ? 0 : segBytes) + " " +
                 (o.registered ? "registered " : "unregistered ") +
                 mscclpp::collectives::algorithmName(best->algorithm) +
                 (best->blocks ? " " + std::to_string(best->blocks) : "") + "\n";
        previous = best;
      }
    }
  }

  void run(const CollInfo& ci) {
    const size_t es = mscclpp::collectives::dataTypeSize(o.type);
    const ReduceOp::Kind shownOp = ci.reduces ? o.op : ReduceOp::Kind::Sum;
    if (rank == 0) {
      std::printf("#\n# %s, %d ranks, %s mode, %s buffers\n", ci.name, nRanks,
                  o.graphLaunches > 0 ? "CUDA graph" : "eager", o.registered ? "registered" : "unregistered");
      std::printf("# floors: flag hop %.2f us, empty graph kernel %.2f us, copy bandwidth per rank %.1f GB/s\n", hopUs,
                  kernelUs, copyBw / 1e9);
      std::printf("#%11s %12s %8s %9s %5s | %9s %7s %7s %6s %9s %6s | %9s %7s %7s %6s %9s %6s\n", "size", "count",
                  "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "floor", "x", "time", "algbw", "busbw",
                  "#wrong", "floor", "x");
      std::printf("#%11s %12s %8s %9s %5s | %9s %7s %7s %6s %9s %6s | %9s %7s %7s %6s %9s %6s\n", "(B)", "(elements)",
                  "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "");
    }
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes;
         bytes = std::max(bytes + 1, static_cast<size_t>(bytes * o.factor))) {
      const Shape s = shapeOf(ci.coll, bytes, es, nRanks);
      const Inputs in = inputsFor(s);
      const std::vector<std::vector<char>>& inputs = in.perRank;
      const std::vector<char>& scalar = in.scalar;
      const ReduceOp& op = in.op;
      char *sendBuf = nullptr, *recvBuf = nullptr;
      const size_t sendBytes = std::max<size_t>(s.sendElems * es, 1), recvBytes = std::max<size_t>(s.recvElems * es, 1);
      BENCH_CUDA(cudaMalloc(&sendBuf, sendBytes));
      BENCH_CUDA(cudaMalloc(&recvBuf, std::max(recvBytes, sendBytes)));
      if (o.registered) {
        coll->registerBuffer(sendBuf, sendBytes);
        coll->registerBuffer(recvBuf, std::max(recvBytes, sendBytes));
      }
      const double latencyFloor = hopUs + kernelUs;
      const double bandwidthFloor = s.floorBytes / copyBw * 1e6;
      const double floorUs = std::max(latencyFloor, bandwidthFloor);
      double t[2];
      long long bad[2];
      for (int inPlace = 0; inPlace < 2; ++inPlace) {
        char* send = sendBuf;
        char* recv = recvBuf;
        if (inPlace) {
          // NCCL's in-place forms: the rank's part of the larger buffer.
          send = recvBuf;
          if (ci.coll == Collective::AllGather || ci.coll == Collective::Gather) send = recvBuf + rank * s.count * es;
          if (ci.coll == Collective::ReduceScatter || ci.coll == Collective::Scatter)
            recv = recvBuf + rank * s.count * es;
        }
        // On the benchmark's stream: a plain cudaMemcpy goes through the legacy default stream, which a
        // non-blocking stream does not wait for, and may return before the bytes land.
        if (s.sendElems) {
          BENCH_CUDA(cudaMemcpyAsync(send, inputs[rank].data(), s.sendElems * es, cudaMemcpyHostToDevice, stream));
          BENCH_CUDA(cudaStreamSynchronize(stream));
        }
        if (o.check) {
          // One checked call on fresh inputs, then the timed calls (which may overwrite in place).
          issue(ci, s, send, recv, op);
          BENCH_CUDA(cudaStreamSynchronize(stream));
          std::vector<char> got(s.recvElems * es);
          if (!got.empty()) BENCH_CUDA(cudaMemcpy(got.data(), recv, got.size(), cudaMemcpyDeviceToHost));
          bad[inPlace] = wrong(ci, s, inputs, got, op, scalar);
        } else {
          bad[inPlace] = -1;
        }
        t[inPlace] = time(ci, s, send, recv, op);
      }
      if (o.registered) {
        coll->deregisterBuffer(sendBuf);
        coll->deregisterBuffer(recvBuf);
      }
      (void)cudaFree(sendBuf);
      (void)cudaFree(recvBuf);
      if (rank == 0) {
        auto algbw = [&](double us) { return us > 0 ? bytes / (us * 1e3) : 0; };
        std::printf(" %11zu %12llu %8s %9s %5d", bytes, static_cast<unsigned long long>(s.count),
                    mscclpp::collectives::dataTypeName(o.type), mscclpp::collectives::reduceOpName(shownOp),
                    ci.rooted ? o.root : -1);
        for (int k = 0; k < 2; ++k) {
          std::printf(" | %9.2f %7.2f %7.2f %6s %9.2f %6.2f", t[k], algbw(t[k]), algbw(t[k]) * s.busFactor,
                      bad[k] < 0 ? "N/A" : std::to_string(bad[k]).c_str(), floorUs, t[k] / floorUs);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Bench bench;
  MPI_Comm_rank(MPI_COMM_WORLD, &bench.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &bench.nRanks);
  bench.o = parse(argc, argv, bench.rank);
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    // The README's main command runs this first; without a GPU the table is skipped, not failed.
    if (bench.rank == 0) {
      std::printf("# collectives table skipped: no usable GPU (%s)\n",
                  probe != cudaSuccess ? cudaGetErrorString(probe) : "no CUDA device");
    }
    MPI_Finalize();
    return 0;
  }
  BENCH_CUDA(cudaSetDevice(bench.rank % devices));
  BENCH_CUDA(cudaStreamCreateWithFlags(&bench.stream, cudaStreamNonBlocking));
  {
    mscclpp::UniqueId id;
    if (bench.rank == 0) id = mscclpp::TcpBootstrap::createUniqueId();
    MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
    auto bootstrap = std::make_shared<mscclpp::TcpBootstrap>(bench.rank, bench.nRanks);
    bootstrap->initialize(id);
    auto comm = std::make_shared<mscclpp::Communicator>(bootstrap);
    bench.hopUs = flagHopUs(*comm, bench.rank, bench.nRanks, bench.stream);
    bench.kernelUs = emptyGraphKernelUs(bench.stream);
    bench.copyBw = copyBandwidth(bench.stream);
    bench.coll = std::make_unique<Collectives>(comm);
    bench.active = bench.coll.get();
    const bool tuning = !bench.o.tuneFile.empty();
    if (tuning) {
      const uint32_t defaultBlocks = static_cast<uint32_t>(bench.coll->config().maxBlocks);
      for (mscclpp::collectives::Algorithm a : kTuneCandidates) {
        std::vector<uint32_t> counts{0};
        if (a == mscclpp::collectives::Algorithm::ZeroCopy) {
          for (uint32_t b : {defaultBlocks / 4, defaultBlocks / 2}) {
            if (b >= 1 && b != counts.back()) counts.push_back(b);
          }
        }
        for (uint32_t b : counts) {
          mscclpp::collectives::Config forced;
          forced.forceAlgorithm = a;
          forced.maxBlocks = static_cast<int>(b);
          bench.candidates.push_back({a, b, std::make_unique<Collectives>(comm, forced)});
        }
      }
    }
    for (const CollInfo& ci : kColls) {
      if (bench.o.coll != "all" && bench.o.coll != ci.name) continue;
      if (tuning) {
        bench.tune(ci);
      } else {
        bench.run(ci);
      }
    }
    if (tuning && bench.rank == 0) {
      std::FILE* file = std::fopen(bench.o.tuneFile.c_str(), "w");
      const std::string header = "# mscclpp-coll-bench -T, " + std::to_string(bench.nRanks) +
                                 " ranks; rules: collective ranks from-bytes registration algorithm [blocks]\n";
      const bool written = file && std::fputs(header.c_str(), file) >= 0 && std::fputs(bench.tuned.c_str(), file) >= 0;
      if (file) std::fclose(file);
      if (!written) {
        std::fprintf(stderr, "-T: cannot write %s\n", bench.o.tuneFile.c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      std::printf("# tuning table written to %s\n", bench.o.tuneFile.c_str());
    }
    BENCH_CUDA(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    bench.candidates.clear();
    bench.coll.reset();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  (void)cudaStreamDestroy(bench.stream);
  MPI_Finalize();
  return 0;
}
