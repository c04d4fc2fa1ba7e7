// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The C++ side of python/benchmark/overhead.py: the same operations as the Python calls it measures,
// looped in C++ in the same process, so that the difference is the cost of the binding layer.

#include <chrono>
#include <mscclpp/collectives.hpp>
#include <mscclpp/core.hpp>
#include <mscclpp/gpu.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Seconds for `iters` rounds of write + flush.
double writeFlush(Connection& connection, RegisteredMemory dst, RegisteredMemory src, uint64_t size, int iters) {
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) {
    connection.write(dst, 0, src, 0, size);
    connection.flush();
  }
  return secondsSince(start);
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);
using SyncFn = CUresult (*)(CUstream);

// Seconds for `iters` launches of `function` with the packed argument buffer `params`, then one stream
// synchronization. The driver entry points come from the caller (the addresses of cuLaunchKernel and
// cuStreamSynchronize it resolved), so this helper links no driver library.
double launchLoop(uintptr_t launchAddress, uintptr_t syncAddress, uintptr_t function, const py::bytes& params,
                  unsigned nblocks, unsigned nthreads, unsigned sharedBytes, uintptr_t stream, int iters) {
  std::string buffer = params;
  size_t bufferSize = buffer.size();
  void* config[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &bufferSize,
                    CU_LAUNCH_PARAM_END};
  auto launch = reinterpret_cast<LaunchFn>(launchAddress);
  auto sync = reinterpret_cast<SyncFn>(syncAddress);
  auto cuStream = reinterpret_cast<CUstream>(stream);
  auto cuFunction = reinterpret_cast<CUfunction>(function);
  py::gil_scoped_release release;
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) {
    CUresult result = launch(cuFunction, nblocks, 1, 1, nthreads, 1, 1, sharedBytes, cuStream, nullptr, config);
    if (result != CUDA_SUCCESS) throw CuError("cuLaunchKernel failed in the benchmark loop", result);
  }
  CUresult result = sync(cuStream);
  if (result != CUDA_SUCCESS) throw CuError("cuStreamSynchronize failed in the benchmark loop", result);
  return secondsSince(start);
}

// Seconds to enqueue `iters` all-reduces (no synchronization: the host cost of the call, which is what the
// Python layer adds to). The caller keeps iters below the launch queue's depth, so that no call waits for
// the GPU.
double allReduceEnqueue(collectives::Collectives& coll, uintptr_t send, uintptr_t recv, size_t count,
                        collectives::DataType type, uintptr_t stream, int iters) {
  const collectives::ReduceOp sum(collectives::ReduceOp::Kind::Sum);
  auto cudaStream = reinterpret_cast<cudaStream_t>(stream);
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) coll.allReduce(toPointer(send), toPointer(recv), count, type, sum, cudaStream);
  return secondsSince(start);
}

}  // namespace

void registerBench(py::module_& m) {
  py::module_ bench = m.def_submodule("_bench", "C++ references for the Python overhead benchmark");
  bench.def("write_flush", &writeFlush, py::arg("connection"), py::arg("dst"), py::arg("src"), py::arg("size"),
            py::arg("iters"), py::call_guard<py::gil_scoped_release>());
  bench.def("launch", &launchLoop, py::arg("cu_launch_kernel"), py::arg("cu_stream_synchronize"), py::arg("function"),
            py::arg("params"), py::arg("nblocks"), py::arg("nthreads"), py::arg("shared_bytes"), py::arg("stream"),
            py::arg("iters"));
  bench.def("all_reduce_enqueue", &allReduceEnqueue, py::arg("collectives"), py::arg("send"), py::arg("recv"),
            py::arg("count"), py::arg("type"), py::arg("stream"), py::arg("iters"),
            py::call_guard<py::gil_scoped_release>());
}

}  // namespace mscclpp::python
