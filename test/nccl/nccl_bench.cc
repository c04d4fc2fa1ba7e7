// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// nccl-tests-style table of the collectives through the NCCL API, with the same collectives called
// through the C++ API (mscclpp::collectives::Collectives) in the same run as the reference: the
// difference is what the NCCL layer adds per call. One process per rank (mpirun); float32, sum,
// out of place. Columns: size, count, time and busbw for each path, the difference per call, and the
// host time to issue one call on each path.
//   mpirun -np N nccl_bench [--quick]

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mscclpp/collectives.hpp>
#include <mscclpp/core.hpp>
#include <string>
#include <vector>

#include "gpu/cuda_event.hpp"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "nccl_bench: %s failed: %s\n", what, ncclGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

struct Result {
  double gpuUs;   // per call, back to back on one stream
  double hostUs;  // per call, time to issue it
};

Result measure(const std::function<void()>& call, cudaStream_t stream, int iters) {
  for (int i = 0; i < 5; ++i) call();
  cudaStreamSynchronize(stream);
  MPI_Barrier(MPI_COMM_WORLD);
  mscclpp::CudaEvent start, stop;
  cudaEventRecord(start, stream);
  auto hostStart = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) call();
  auto hostEnd = std::chrono::steady_clock::now();
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  double gpu = ms * 1e3 / iters, host = std::chrono::duration<double, std::micro>(hostEnd - hostStart).count() / iters;
  MPI_Allreduce(MPI_IN_PLACE, &gpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &host, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return {gpu, host};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int nGpus = 0;
  if (cudaGetDeviceCount(&nGpus) != cudaSuccess || nGpus == 0) {
    if (rank == 0) std::printf("nccl_bench: no GPU, nothing measured\n");
    MPI_Finalize();
    return 0;
  }
  cudaSetDevice(rank % nGpus);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

  ncclUniqueId id;
  if (rank == 0) require(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  require(ncclCommInitRank(&comm, n, id, rank) == ncclSuccess, "ncclCommInitRank");

  // The C++ path: its own bootstrap, communicator and collectives object.
  mscclpp::UniqueId cppId;
  if (rank == 0) cppId = mscclpp::TcpBootstrap::createUniqueId();
  MPI_Bcast(cppId.data(), static_cast<int>(cppId.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  auto bootstrap = std::make_shared<mscclpp::TcpBootstrap>(rank, n);
  bootstrap->initialize(cppId);
  mscclpp::collectives::Collectives cpp(std::make_shared<mscclpp::Communicator>(bootstrap));
  using mscclpp::collectives::DataType;
  const mscclpp::collectives::ReduceOp sum(mscclpp::collectives::ReduceOp::Kind::Sum);

  const size_t maxBytes = quick ? (1 << 20) : (256u << 20);
  void *send = nullptr, *recv = nullptr;
  cudaMalloc(&send, maxBytes * n);
  cudaMalloc(&recv, maxBytes * n);
  cudaMemset(send, 0, maxBytes * n);

  struct Coll {
    const char* name;
    double busFactor;
    std::function<void(size_t)> viaNccl, viaCpp;
  };
  const double nn = n;
  std::vector<Coll> colls = {
      {"allreduce", 2 * (nn - 1) / nn,
       [&](size_t c) { ncclAllReduce(send, recv, c, ncclFloat32, ncclSum, comm, stream); },
       [&](size_t c) { cpp.allReduce(send, recv, c, DataType::Float32, sum, stream); }},
      {"allgather", (nn - 1) / nn, [&](size_t c) { ncclAllGather(send, recv, c / n, ncclFloat32, comm, stream); },
       [&](size_t c) { cpp.allGather(send, recv, c / n, DataType::Float32, stream); }},
      {"reducescatter", (nn - 1) / nn,
       [&](size_t c) { ncclReduceScatter(send, recv, c / n, ncclFloat32, ncclSum, comm, stream); },
       [&](size_t c) { cpp.reduceScatter(send, recv, c / n, DataType::Float32, sum, stream); }},
      {"broadcast", 1.0, [&](size_t c) { ncclBroadcast(send, recv, c, ncclFloat32, 0, comm, stream); },
       [&](size_t c) { cpp.broadcast(send, recv, c, DataType::Float32, 0, stream); }},
      {"alltoall", (nn - 1) / nn, [&](size_t c) { ncclAlltoAll(send, recv, c / n, ncclFloat32, comm, stream); },
       [&](size_t c) { cpp.allToAll(send, recv, c / n, DataType::Float32, stream); }},
  };
  for (const Coll& coll : colls) {
    if (rank == 0) {
      std::printf("# %s, %d ranks, float32%s; time in us per call, busbw in GB/s\n", coll.name, n,
                  coll.busFactor == 2 * (nn - 1) / nn ? ", sum" : "");
      std::printf("%12s %12s %10s %8s %10s %8s %9s %9s %9s\n", "size", "count", "nccl-time", "busbw", "c++-time",
                  "busbw", "added", "nccl-host", "c++-host");
    }
    for (size_t bytes = 1024; bytes <= maxBytes; bytes *= (quick ? 32 : 4)) {
      const size_t count = bytes / sizeof(float) / n * n;
      const int iters = bytes <= (1 << 20) ? 200 : 20;
      Result a = measure([&]() { coll.viaNccl(count); }, stream, iters);
      Result b = measure([&]() { coll.viaCpp(count); }, stream, iters);
      const double size = count * sizeof(float);
      if (rank == 0) {
        std::printf("%12zu %12zu %10.2f %8.1f %10.2f %8.1f %9.2f %9.2f %9.2f\n", static_cast<size_t>(size), count,
                    a.gpuUs, size / a.gpuUs / 1e3 * coll.busFactor, b.gpuUs, size / b.gpuUs / 1e3 * coll.busFactor,
                    a.gpuUs - b.gpuUs, a.hostUs, b.hostUs);
      }
    }
  }
  cudaStreamSynchronize(stream);
  cudaFree(send);
  cudaFree(recv);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
