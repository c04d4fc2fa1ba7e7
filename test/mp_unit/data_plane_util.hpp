// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Shared by the multi-process data-plane suites (CUDA sources only): the ranks form pairs
// (0,1), (2,3), ... that share one GPU or use GPU rank % deviceCount, and every pair runs the same
// test body against each other at the same time.
//
// How these suites stay bounded when something is wrong:
// - skipping is decided collectively, so no rank waits in MPI for a rank that skipped;
// - a test body runs under runPairTest(): an exception or a failed ASSERT on one rank ends that rank's
//   body, and its peer's next blocking step fails too (bootstrap steps have a deadline, device waits a
//   spin limit), after which both meet again at the closing MPI barrier;
// - inside a body, ranks synchronize through the bootstrap (bounded), never through MPI;
// - kernels are awaited with a host deadline; a kernel still running past it aborts the whole job
//   (MPI_Abort), which fails the run instead of hanging it.

#ifndef MSCCLPP_TEST_MP_UNIT_DATA_PLANE_UTIL_HPP_
#define MSCCLPP_TEST_MP_UNIT_DATA_PLANE_UTIL_HPP_

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mscclpp/core.hpp>
#include <mscclpp/errors.hpp>
#include <mscclpp/gpu.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/gpu_test.hpp"
#include "mp_unit/mp_test.hpp"

namespace mscclpp::test {

/// Device waits in these suites give up after this many polls. A poll of a token takes well under a
/// microsecond, so this is seconds: far longer than any legitimate wait between two kernels that were
/// launched together, short enough that a lost signal ends the test.
inline constexpr int64_t kDeviceSpinLimit = 20000000;

/// How long the host waits for a kernel before it gives up on the whole job.
inline constexpr std::chrono::seconds kKernelDeadline(180);

/// A byte that depends on a seed and a position: fills and checks compare against it.
__host__ __device__ inline uint8_t patternByte(uint32_t seed, uint64_t index) {
  uint64_t x = (index + 0x632be59bd9b4e019ull) * 0x9e3779b97f4a7c15ull ^ (uint64_t{seed} * 0xbf58476d1ce4e5b9ull);
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  return static_cast<uint8_t>(x >> 40);
}

/// A 32-bit word stamped by (side, round, index): what ping-pong kernels write and check.
__host__ __device__ inline uint32_t stamp(uint32_t side, uint32_t round, uint32_t index) {
  return (side * 0x9e3779b1u) ^ (round * 0x85ebca77u) ^ (index * 0xc2b2ae3du) ^ 0x27d4eb2fu;
}

/// What a buffer should hold after a copy into it: [lo, hi) carries the source pattern (`seed` at
/// positions srcFirst, srcFirst+1, ...), every other byte the background pattern it was filled with.
struct ExpectedBytes {
  uint64_t lo;
  uint64_t hi;
  uint32_t seed;
  uint64_t srcFirst;
  uint32_t backgroundSeed;
};

// Kernels, and the helpers that launch them, have internal linkage: every suite that includes this
// header gets its own copy.
static __global__ void fillPatternKernel(uint8_t* p, uint64_t n, uint32_t seed, uint64_t first) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x) {
    p[i] = patternByte(seed, first + i);
  }
}

/// Counts the bytes of [p, p+n) that differ from `e` into *bad and the lowest such offset into
/// *firstBad; thread `threadId` of `numThreads` checks every numThreads-th byte.
static __device__ void countUnexpectedBytes(const uint8_t* p, uint64_t n, const ExpectedBytes& e,
                                            unsigned long long* bad, unsigned long long* firstBad, uint64_t threadId,
                                            uint64_t numThreads) {
  for (uint64_t i = threadId; i < n; i += numThreads) {
    const uint8_t want =
        (i >= e.lo && i < e.hi) ? patternByte(e.seed, e.srcFirst + (i - e.lo)) : patternByte(e.backgroundSeed, i);
    if (p[i] != want) {
      atomicAdd(bad, 1ULL);
      atomicMin(firstBad, static_cast<unsigned long long>(i));
    }
  }
}

static __global__ void countUnexpectedKernel(const uint8_t* p, uint64_t n, ExpectedBytes e, unsigned long long* bad,
                                             unsigned long long* firstBad) {
  countUnexpectedBytes(p, n, e, bad, firstBad, blockIdx.x * uint64_t{blockDim.x} + threadIdx.x,
                       uint64_t{gridDim.x} * blockDim.x);
}

/// A CUDA call's error as text, for failure messages.
inline std::string cudaText(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

/// Throws (ending the test body on this rank) unless `err` is cudaSuccess.
inline void cudaCheck(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaText(err));
}

/// Zeroed device memory of the current GPU; freed on destruction.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) : bytes_(bytes) {
    cudaCheck(cudaMalloc(&ptr_, bytes), "cudaMalloc");
    cudaCheck(cudaMemset(ptr_, 0, bytes), "cudaMemset");
    cudaCheck(cudaDeviceSynchronize(), "zeroing new device memory");
  }
  ~DeviceMemory() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  char* get() const { return static_cast<char*>(ptr_); }
  /// Element `index` of the memory viewed as an array of T.
  template <typename T>
  T* as(size_t index = 0) const {
    return reinterpret_cast<T*>(get()) + index;
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
  void* ptr_ = nullptr;
};

/// Pinned host memory mapped for the device: the host reads what kernels store there.
template <typename T>
class MappedHostMemory {
 public:
  explicit MappedHostMemory(size_t count) {
    void* p = nullptr;
    cudaCheck(cudaHostAlloc(&p, count * sizeof(T), cudaHostAllocMapped), "cudaHostAlloc");
    host_ = static_cast<T*>(p);
    for (size_t i = 0; i < count; ++i) host_[i] = T{};
    void* d = nullptr;
    cudaCheck(cudaHostGetDevicePointer(&d, p, 0), "cudaHostGetDevicePointer");
    device_ = static_cast<T*>(d);
  }
  ~MappedHostMemory() {
    if (host_ != nullptr) (void)cudaFreeHost(host_);
  }
  MappedHostMemory(const MappedHostMemory&) = delete;
  MappedHostMemory& operator=(const MappedHostMemory&) = delete;

  T* host() const { return host_; }
  T* device() const { return device_; }

 private:
  T* host_ = nullptr;
  T* device_ = nullptr;
};

/// A non-blocking stream: the tests' kernels never wait for (or hold up) the library's own streams.
class TestStream {
 public:
  TestStream() { cudaCheck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~TestStream() { (void)cudaStreamDestroy(stream_); }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Waits for everything queued on `stream`. A kernel that failed (e.g. a spin limit trapped) throws;
/// one still running after kKernelDeadline aborts the job, since no rank could continue past it.
inline void finish(cudaStream_t stream, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + kKernelDeadline;
  cudaError_t err;
  while ((err = cudaStreamQuery(stream)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > deadline) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr, "[rank %d] %s still running after %lld s: aborting the job instead of hanging\n", rank,
                   what.c_str(), static_cast<long long>(kKernelDeadline.count()));
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (err != cudaSuccess) throw std::runtime_error(what + " failed: " + cudaText(err));
}

/// Checks the kernel launch just made.
inline void launched(const char* what) { cudaCheck(cudaGetLastError(), what); }

static inline void fillPattern(void* p, uint64_t bytes, uint32_t seed, cudaStream_t stream, uint64_t first = 0) {
  fillPatternKernel<<<256, 512, 0, stream>>>(static_cast<uint8_t*>(p), bytes, seed, first);
  launched("fillPatternKernel");
}

/// How many bytes of [p, p+bytes) differ from `expected` (and the first that does), read by a kernel.
struct Mismatches {
  unsigned long long count = 0;
  unsigned long long first = 0;
};

static inline Mismatches countUnexpected(const void* p, uint64_t bytes, const ExpectedBytes& expected,
                                         cudaStream_t stream) {
  DeviceMemory counters(2 * sizeof(unsigned long long));
  const unsigned long long none = ~0ULL;
  cudaCheck(cudaMemcpyAsync(counters.as<unsigned long long>(1), &none, sizeof(none), cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync");
  countUnexpectedKernel<<<256, 512, 0, stream>>>(static_cast<const uint8_t*>(p), bytes, expected,
                                                 counters.as<unsigned long long>(0),
                                                 counters.as<unsigned long long>(1));
  launched("countUnexpectedKernel");
  Mismatches out;
  unsigned long long host[2] = {0, 0};
  cudaCheck(cudaMemcpyAsync(host, counters.get(), sizeof(host), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  finish(stream, "countUnexpectedKernel");
  out.count = host[0];
  out.first = host[1];
  return out;
}

template <typename T>
std::vector<T> toHost(const void* p, size_t count, cudaStream_t stream) {
  std::vector<T> out(count);
  cudaCheck(cudaMemcpyAsync(out.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  finish(stream, "copy to host");
  return out;
}

template <typename T>
T wordToHost(const T* p, cudaStream_t stream) {
  return toHost<T>(p, 1, stream).at(0);
}

/// Runs `fn`, expecting Error(InvalidUsage); `what` names the call in the failure message.
inline void expectInvalidUsage(const std::function<void()>& fn, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << what << ": accepted, expected Error(InvalidUsage)";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw something else than mscclpp::Error: " << e.what();
  }
}

/// Base of the data-plane suites: ranks in pairs, each on GPU rank % deviceCount.
class DataPlaneMpTest : public MultiProcessTest {
 protected:
  void SetUp() override {
    MultiProcessTest::SetUp();
    peer = rank ^ 1;
    initiator = (rank % 2) == 0;
  }

  /// Makes this rank's GPU current; every rank learns whether all could.
  bool selectGpu() {
    const int count = gpuCapabilities().deviceCount;
    bool ok = count > 0 && cudaSetDevice(rank % count) == cudaSuccess;
    return !anyRank(!ok);
  }

  void TearDown() override {
    // Every rank has passed runPairTest's closing barrier, so no peer maps these any more.
    buffers_.clear();
  }

  /// Zeroed device memory that lives until the test ends (after every peer has dropped its mapping
  /// of it: freeing memory another process still has open is undefined for runtime IPC).
  DeviceMemory& allocate(size_t bytes) {
    buffers_.push_back(std::make_unique<DeviceMemory>(bytes));
    return *buffers_.back();
  }

  /// Runs one rank's part of a test with a fresh bootstrap of all ranks. Whatever ends the body early
  /// (an exception, a failed ASSERT) is reported for this rank; then every rank meets at an MPI
  /// barrier, having destroyed every library object of the body (and with them its mappings of the
  /// peer's memory).
  void runPairTest(const std::function<void(std::shared_ptr<TcpBootstrap>)>& body) {
    try {
      body(makeBootstrap());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << rank << ": " << e.what();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  int peer = 0;
  /// The even rank of a pair: the one that moves first in ping-pongs.
  bool initiator = true;

 private:
  std::vector<std::unique_ptr<DeviceMemory>> buffers_;
};

/// Skips the test on every rank unless every rank has a GPU and the ranks pair up; then makes this
/// rank's GPU current.
#define MSCCLPP_DATA_PLANE_REQUIRE_GPU_PAIRS()                                               \
  do {                                                                                       \
    if (anyRank(!::mscclpp::gpuCapabilities().gpuAvailable())) {                             \
      MSCCLPP_REQUIRE_GPU();                                                                 \
      GTEST_SKIP() << "another rank has no GPU";                                             \
    }                                                                                        \
    if (nRanks < 2 || nRanks % 2 != 0) {                                                     \
      GTEST_SKIP() << "needs an even number of ranks (they work in pairs), have " << nRanks; \
    }                                                                                        \
    ASSERT_TRUE(selectGpu()) << "a rank could not make its GPU current";                     \
  } while (0)

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_MP_UNIT_DATA_PLANE_UTIL_HPP_
