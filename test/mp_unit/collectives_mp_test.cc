// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The collectives between real processes (2, 3 or 4 ranks, sharing a GPU under MPS or not): every
// collective x every data type x every reduction x sizes {0, 1, odd, 4 KiB, 1 MiB + 3, 64 MiB (a
// subset of types)} x in-place and out-of-place, compared with the host reference
// (test/common/collectives_reference.hpp), exactly for integers and within one unit in the last place
// for floating types; results that every rank holds must be bit-identical across ranks. Then CUDA
// graph capture and replay, 32 calls back to back at 1 MiB + 3 elements, two objects in flight on
// two streams, send/recv groups, no growth of device memory over 10,000 calls, and the rejection of
// bad arguments. Each algorithm that Auto reaches only in some size bands runs the matrix too, through an
// object that forces it: zero-copy and copy engines on registered buffers, two-shot LL and staged
// all-reduce. Zero-copy has its own tests as well: graphs, back-to-back calls mixed with the other
// paths, a buffer freed and reallocated, and registrations refused on every rank. Capture-time
// registration (CollectivesCaptureMpTest): every collective that has a path on peers' buffers, captured
// on unregistered buffers at rank-dependent offsets and replayed, a second capture, buffers freed and
// reallocated between captures, and the bound. Inputs are uploaded in the order of the stream the
// collectives run on (upload()).

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mscclpp/collectives.hpp>
#include <mscclpp/env.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "common/collectives_reference.hpp"
#include "common/gpu_test.hpp"
#include "ext/collectives/selection.hpp"
#include "mp_unit/mp_test.hpp"

using mscclpp::Communicator;
using mscclpp::Error;
using mscclpp::gpuCapabilities;
using namespace mscclpp::test;
using mscclpp::collectives::Algorithm;
using mscclpp::collectives::Collective;
using mscclpp::collectives::Collectives;
using mscclpp::collectives::dataTypeSize;

namespace {

constexpr unsigned char kSentinel = 0xA5;
constexpr size_t kGuardBytes = 64;
/// Above the two-shot LL sizes: where the `mixed` object runs zero-copy on registered buffers.
constexpr size_t kMixedZeroCopyBytes = 4 << 20;

#define CUDA_OK(cmd) ASSERT_EQ((cmd), cudaSuccess) << #cmd

/// Device memory of a test, freed when the test ends (after the closing barrier of the test body).
struct DeviceBytes {
  char* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBytes(size_t n) : bytes(n) {
    if (cudaMalloc(&ptr, n == 0 ? 1 : n) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBytes() {
    if (ptr) (void)cudaFree(ptr);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

/// The objects every test of this file shares: building them maps every peer's scratch, which is
/// set-up work tests should not repeat. Built by the first test, in the same order on every rank.
struct Shared {
  std::shared_ptr<Communicator> comm;
  std::unique_ptr<Collectives> coll;
  std::unique_ptr<Collectives> second;      // for two collectives in flight
  std::unique_ptr<Collectives> zeroCopy;    // forces ZeroCopy wherever the buffers are registered
  std::unique_ptr<Collectives> twoShot;     // forces LLTwoShot (all-reduce)
  std::unique_ptr<Collectives> staged;      // forces Staged
  std::unique_ptr<Collectives> copyEngine;  // forces CopyEngine wherever the buffers are registered
  std::unique_ptr<Collectives> mixed;       // ZeroCopy from kMixedZeroCopyBytes on registered buffers, else Auto
  // Buffers that calls captured on the shared objects used unregistered: the peers keep them mapped until
  // the objects are destroyed (capture-time registration), so they are freed after the objects.
  std::vector<std::unique_ptr<DeviceBytes>> kept;
};
Shared& shared() {
  static Shared s;
  return s;
}

class SharedTeardown : public ::testing::Environment {
 public:
  void TearDown() override {
    if (shared().coll) {
      (void)cudaDeviceSynchronize();
      MPI_Barrier(MPI_COMM_WORLD);  // nobody still uses a scratch this rank is about to free
      shared().mixed.reset();
      shared().copyEngine.reset();
      shared().staged.reset();
      shared().twoShot.reset();
      shared().zeroCopy.reset();
      shared().second.reset();
      shared().coll.reset();
      shared().comm.reset();
      MPI_Barrier(MPI_COMM_WORLD);
      shared().kept.clear();
    }
  }
};
const auto* const kTeardown = ::testing::AddGlobalTestEnvironment(new SharedTeardown);

class CollectivesMpTest : public MultiProcessTest {
 protected:
  /// Skips on every rank unless every rank has a GPU; then builds the shared objects (once).
  bool ready() {
    if (anyRank(!gpuCapabilities().gpuAvailable())) return false;
    const int count = gpuCapabilities().deviceCount;
    if (anyRank(cudaSetDevice(rank % count) != cudaSuccess)) return false;
    if (!shared().coll) {
      shared().comm = std::make_shared<Communicator>(makeBootstrap());
      shared().coll = std::make_unique<Collectives>(shared().comm);
      shared().second = std::make_unique<Collectives>(shared().comm);
      mscclpp::collectives::Config forced;
      forced.forceAlgorithm = Algorithm::ZeroCopy;
      shared().zeroCopy = std::make_unique<Collectives>(shared().comm, forced);
      forced.forceAlgorithm = Algorithm::LLTwoShot;
      shared().twoShot = std::make_unique<Collectives>(shared().comm, forced);
      forced.forceAlgorithm = Algorithm::Staged;
      shared().staged = std::make_unique<Collectives>(shared().comm, forced);
      forced.forceAlgorithm = Algorithm::CopyEngine;
      shared().copyEngine = std::make_unique<Collectives>(shared().comm, forced);
      mscclpp::collectives::Config mixed;
      mixed.selector = [](Collective, size_t bytes, int) {
        return bytes >= kMixedZeroCopyBytes ? Algorithm::ZeroCopy : Algorithm::Auto;
      };
      shared().mixed = std::make_unique<Collectives>(shared().comm, mixed);
    }
    return !anyRank(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess);
  }
  Collectives& coll() { return *shared().coll; }
  Collectives& zeroCopy() { return *shared().zeroCopy; }

  void TearDown() override {
    if (stream) (void)cudaStreamDestroy(stream);
  }

  /// Copies `bytes` from the host to `dst` in the order of `stream` and waits for them to land. A
  /// plain cudaMemcpy from pageable memory goes through the legacy default stream, which a
  /// non-blocking stream does not wait for, and may return before its DMA finished: a collective on
  /// `stream` could then read (and send its peers) the bytes that were there before.
  cudaError_t upload(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return cudaSuccess;
    const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
    return err != cudaSuccess ? err : cudaStreamSynchronize(stream);
  }

  /// Sets `bytes` at `dst` to `value` in the order of `stream` (cudaMemset, on the legacy default
  /// stream, could still be running when a collective on `stream` writes its output).
  cudaError_t fill(void* dst, unsigned char value, size_t bytes) { return cudaMemsetAsync(dst, value, bytes, stream); }

  /// True on every rank if `local` holds on every rank.
  bool allRanks(bool local) { return !anyRank(!local); }

  /// Whether `bytes` of this rank equal those of every other rank (by a 64-bit FNV-1a hash).
  bool identicalAcrossRanks(const std::vector<char>& bytes) {
    uint64_t h = 1469598103934665603ull;
    for (char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    std::vector<uint64_t> all(nRanks);
    MPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (uint64_t v : all) {
      if (v != all[0]) return false;
    }
    return true;
  }

  cudaStream_t stream = nullptr;
};

#define COLL_REQUIRE_GPU()                              \
  do {                                                  \
    if (!ready()) {                                     \
      MSCCLPP_REQUIRE_GPU();                            \
      GTEST_SKIP() << "another rank has no usable GPU"; \
    }                                                   \
  } while (0)

/// For tests of what Auto selects: MSCCLPP_COLL_ALGO (read by every object's Config) overrides it.
#define COLL_REQUIRE_AUTO()                                                                              \
  do {                                                                                                   \
    if (mscclpp::env()->collAlgo != "auto")                                                              \
      GTEST_SKIP() << "MSCCLPP_COLL_ALGO=" << mscclpp::env()->collAlgo << " overrides Auto's selection"; \
  } while (0)

// ---- the matrix ----

enum class Size { Zero, One, Odd, Page, MiBPlus3, Big };

uint64_t elementsOf(Size size, DataType type) {
  const uint64_t es = dataTypeSize(type);
  switch (size) {
    case Size::Zero:
      return 0;
    case Size::One:
      return 1;
    case Size::Odd:
      return 1001;
    case Size::Page:
      return 4096 / es;
    case Size::MiBPlus3:
      return (1 << 20) / es + 3;
    case Size::Big:
      return (64ull << 20) / es;
  }
  return 0;
}

const char* sizeName(Size size) {
  switch (size) {
    case Size::Zero:
      return "0";
    case Size::One:
      return "1";
    case Size::Odd:
      return "1001";
    case Size::Page:
      return "4KiB";
    case Size::MiBPlus3:
      return "1MiBplus3";
    case Size::Big:
      return "64MiB";
  }
  return "?";
}

/// The object a matrix case runs on: Auto's choice, or one algorithm forced (ZeroCopy and CopyEngine
/// on buffers registered for the call).
enum class Path { Auto, ZeroCopy, TwoShot, Staged, CopyEngine };

const char* pathSuffix(Path path) {
  switch (path) {
    case Path::Auto:
      return "";
    case Path::ZeroCopy:
      return "_registered";
    case Path::TwoShot:
      return "_ll2";
    case Path::Staged:
      return "_staged";
    case Path::CopyEngine:
      return "_ce";
  }
  return "?";
}

/// Collective, type, reduction, size, in place, path.
using MatrixParam = std::tuple<Collective, DataType, ReduceOp::Kind, Size, bool, Path>;

bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce;
}

/// Elements of each rank's send and recv buffers for a per-rank `count`.
void bufferElements(Collective c, uint64_t count, int n, uint64_t& sendElems, uint64_t& recvElems) {
  sendElems = recvElems = count;
  switch (c) {
    case Collective::AllGather:
    case Collective::Gather:
      recvElems = count * n;
      break;
    case Collective::ReduceScatter:
    case Collective::Scatter:
      sendElems = count * n;
      break;
    case Collective::AllToAll:
      sendElems = recvElems = count * n;
      break;
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::AllToAllv:
    case Collective::SendRecv:
      break;
  }
}

class CollectivesMatrix : public CollectivesMpTest, public ::testing::WithParamInterface<MatrixParam> {};

TEST_P(CollectivesMatrix, MatchesHostReference) {
  COLL_REQUIRE_GPU();
  const auto [collective, type, opKind, size, inPlace, path] = GetParam();
  const bool registered = path == Path::ZeroCopy || path == Path::CopyEngine;
  const int n = nRanks, r = rank;
  const int root = n > 1 ? 1 : 0;
  const uint64_t es = dataTypeSize(type);
  const uint64_t count = elementsOf(size, type);
  const uint64_t seed = static_cast<uint64_t>(static_cast<int>(type) * 31 + static_cast<int>(opKind) * 7 +
                                              static_cast<int>(size) * 3 + (inPlace ? 1 : 0));
  uint64_t sendElems, recvElems;
  bufferElements(collective, count, n, sendElems, recvElems);

  // This rank's input. Each rank computes its expected output from the parts of the other ranks'
  // inputs it needs (testInputs makes any part of any rank's) or, for reductions, from the value
  // indices alone (TestInputReduction).
  const std::vector<char> mine = testInputs(type, r, sendElems, seed);

  // Where send and recv live. In place: the send data sits where NCCL's in-place form puts it.
  const uint64_t bufferElems = inPlace && sendElems > recvElems ? sendElems : recvElems;
  DeviceBytes recvMem(bufferElems * es + kGuardBytes);
  DeviceBytes sendMem(inPlace ? 0 : sendElems * es);
  ASSERT_NE(recvMem.ptr, nullptr);
  CUDA_OK(fill(recvMem.ptr, kSentinel, bufferElems * es + kGuardBytes));
  char* recv = recvMem.ptr;
  char* send = sendMem.ptr;
  if (inPlace) {
    switch (collective) {
      case Collective::AllGather:
      case Collective::Gather:
        send = recv + r * count * es;
        break;
      case Collective::ReduceScatter:
      case Collective::Scatter:
        // The send buffer is the larger one; recv is this rank's slice of it.
        send = recv;
        recv = send + r * count * es;
        break;
      case Collective::AllReduce:
      case Collective::Reduce:
      case Collective::Broadcast:
      case Collective::AllToAll:
      case Collective::AllToAllv:
      case Collective::SendRecv:
        send = recv;
        break;
    }
  }
  const bool hasInput = collective != Collective::Broadcast || r == root;
  const bool scatterRoot = collective != Collective::Scatter || r == root;
  const bool recvIsInput = inPlace && (collective == Collective::ReduceScatter || collective == Collective::Scatter);
  const bool inputCopied = hasInput && scatterRoot && sendElems > 0;
  if (inputCopied) CUDA_OK(upload(send, mine.data(), sendElems * es));
  // Registered: the whole of each buffer, guard bytes included, on the object that forces ZeroCopy.
  Collectives& c = path == Path::ZeroCopy     ? zeroCopy()
                   : path == Path::TwoShot    ? *shared().twoShot
                   : path == Path::Staged     ? *shared().staged
                   : path == Path::CopyEngine ? *shared().copyEngine
                                              : coll();
  if (registered) {
    c.registerBuffer(recvMem.ptr, bufferElems * es + kGuardBytes);
    if (!inPlace) c.registerBuffer(sendMem.ptr, sendElems * es);
  }

  // PreMulSum: rank q scales by q + 1, as nccl-tests gives each rank a scalar of its own.
  DeviceBytes scalarMem(8);
  ReduceOp op;
  std::vector<std::vector<char>> scalars(n, std::vector<char>(es));
  for (int q = 0; q < n; ++q) fromDouble(type, q + 1.0, scalars[q].data());
  if (opKind == ReduceOp::Kind::PreMulSum) {
    if (seed % 2 == 0) {
      op = ReduceOp::preMulSumHost(scalars[r].data(), type);
    } else {
      CUDA_OK(upload(scalarMem.ptr, scalars[r].data(), es));
      op = ReduceOp::preMulSumDevice(scalarMem.ptr);
    }
  } else {
    op = ReduceOp(opKind);
  }

  switch (collective) {
    case Collective::AllReduce:
      c.allReduce(send, recv, count, type, op, stream);
      break;
    case Collective::ReduceScatter:
      c.reduceScatter(send, recv, count, type, op, stream);
      break;
    case Collective::Reduce:
      c.reduce(send, recv, count, type, op, root, stream);
      break;
    case Collective::AllGather:
      c.allGather(send, recv, count, type, stream);
      break;
    case Collective::Broadcast:
      c.broadcast(send, recv, count, type, root, stream);
      break;
    case Collective::AllToAll:
      c.allToAll(send, recv, count, type, stream);
      break;
    case Collective::Gather:
      c.gather(send, recv, count, type, root, stream);
      break;
    case Collective::Scatter:
      c.scatter(send, recv, count, type, root, stream);
      break;
    case Collective::AllToAllv:
    case Collective::SendRecv:
      FAIL() << "not a matrix collective";
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  if (registered) {
    if (!inPlace) c.deregisterBuffer(sendMem.ptr);
    c.deregisterBuffer(recvMem.ptr);
  }

  const uint64_t outElems = recvIsInput ? sendElems : recvElems;
  std::vector<char> got(outElems * es + kGuardBytes);
  CUDA_OK(cudaMemcpy(got.data(), recvMem.ptr, got.size(), cudaMemcpyDeviceToHost));
  // `expected` covers the whole buffer recvMem holds; bytes the collective must not touch keep the
  // sentinel (or the input, where recv lies inside send).
  std::vector<char> expected(got.size(), static_cast<char>(kSentinel));
  if (recvIsInput && inputCopied) std::memcpy(expected.data(), mine.data(), sendElems * es);
  const uint64_t outOffset = recvIsInput ? r * count * es : 0;
  char* out = expected.data() + outOffset;
  // Rank q's input from element `offset`, `count` of them, at dst.
  auto inputOf = [&](int q, uint64_t offset, char* dst) {
    const std::vector<char> part = testInputs(type, q, count, seed, offset);
    std::memcpy(dst, part.data(), count * es);
  };
  bool writesOutput = true;
  switch (collective) {
    case Collective::AllReduce:
    case Collective::Reduce:
    case Collective::ReduceScatter: {
      writesOutput = collective != Collective::Reduce || r == root;
      const uint64_t base = collective == Collective::ReduceScatter ? r * count : 0;
      if (!writesOutput) {
        if (inPlace) std::memcpy(out, mine.data(), count * es);
        break;
      }
      TestInputReduction(type, opKind, n, seed, scalars).fill(base, count, out);
      break;
    }
    case Collective::AllGather:
    case Collective::Gather:
      writesOutput = collective == Collective::AllGather || r == root;
      if (!writesOutput) {
        if (inPlace) std::memcpy(out + r * count * es, mine.data(), count * es);
        break;
      }
      for (int q = 0; q < n; ++q) inputOf(q, 0, out + q * count * es);
      break;
    case Collective::Broadcast:
      inputOf(root, 0, out);
      break;
    case Collective::Scatter:
      inputOf(root, r * count, out);
      break;
    case Collective::AllToAll:
      for (int q = 0; q < n; ++q) inputOf(q, r * count, out + q * count * es);
      break;
    case Collective::AllToAllv:
    case Collective::SendRecv:
      break;
  }

  uint64_t firstWrong = 0;
  const uint64_t wrong = mismatches(type, got.data(), expected.data(), outElems, &firstWrong);
  EXPECT_EQ(wrong, 0u) << "first wrong element " << firstWrong << ": got "
                       << (wrong ? toDouble(type, got.data() + firstWrong * es) : 0) << ", want "
                       << (wrong ? toDouble(type, expected.data() + firstWrong * es) : 0);
  EXPECT_EQ(std::memcmp(got.data() + outElems * es, expected.data() + outElems * es, kGuardBytes), 0)
      << "bytes past the output were written";
  if (collective == Collective::AllReduce || collective == Collective::AllGather ||
      collective == Collective::Broadcast) {
    EXPECT_TRUE(identicalAcrossRanks(std::vector<char>(got.begin(), got.begin() + outElems * es)))
        << "ranks disagree on the result";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

std::string matrixName(const ::testing::TestParamInfo<MatrixParam>& info) {
  const auto [c, t, op, size, inPlace, path] = info.param;
  std::string name =
      std::string(mscclpp::collectives::collectiveName(c)) + "_" + mscclpp::collectives::dataTypeName(t) + "_";
  if (reduces(c)) name += std::string(mscclpp::collectives::reduceOpName(op)) + "_";
  return name + sizeName(size) + (inPlace ? "_inplace" : "_outofplace") + pathSuffix(path);
}

std::vector<MatrixParam> matrixCases() {
  std::vector<MatrixParam> cases;
  const std::vector<Collective> colls = {Collective::AllReduce, Collective::ReduceScatter, Collective::Reduce,
                                         Collective::AllGather, Collective::Broadcast,     Collective::AllToAll,
                                         Collective::Gather,    Collective::Scatter};
  const std::vector<ReduceOp::Kind> ops = {ReduceOp::Kind::Sum, ReduceOp::Kind::Prod, ReduceOp::Kind::Max,
                                           ReduceOp::Kind::Min, ReduceOp::Kind::Avg,  ReduceOp::Kind::PreMulSum};
  for (Collective c : colls) {
    // The forced paths each collective has, from the library's own table.
    const mscclpp::collectives::Variants variants = mscclpp::collectives::variantsOf(c);
    for (int t = 0; t < mscclpp::collectives::NumDataTypes; ++t) {
      const DataType type = static_cast<DataType>(t);
      for (ReduceOp::Kind op : ops) {
        if (!reduces(c) && op != ReduceOp::Kind::Sum) continue;
        for (Size size : {Size::Zero, Size::One, Size::Odd, Size::Page, Size::MiBPlus3, Size::Big}) {
          // 64 MiB: the bandwidth paths for a few types, one reduction; the small sizes cover the rest.
          if (size == Size::Big &&
              !(op == ReduceOp::Kind::Sum && (type == DataType::Float32 || type == DataType::Bfloat16 ||
                                              (type == DataType::Int8 && c == Collective::AllReduce)))) {
            continue;
          }
          for (bool inPlace : {false, true}) {
            cases.emplace_back(c, type, op, size, inPlace, Path::Auto);
            // Sizes that cover one element, a ragged tail, and several blocks (Auto runs LL below).
            const bool forcedSize = size == Size::One || size == Size::Odd || size == Size::MiBPlus3;
            if (variants.zeroCopy && (forcedSize || size == Size::Big)) {
              cases.emplace_back(c, type, op, size, inPlace, Path::ZeroCopy);
            }
            if (variants.copyEngine && (forcedSize || size == Size::Big)) {
              cases.emplace_back(c, type, op, size, inPlace, Path::CopyEngine);
            }
            if (c == Collective::AllReduce && forcedSize) {
              cases.emplace_back(c, type, op, size, inPlace, Path::TwoShot);
              cases.emplace_back(c, type, op, size, inPlace, Path::Staged);
            }
          }
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Collectives, CollectivesMatrix, ::testing::ValuesIn(matrixCases()), matrixName);

// ---- beyond the matrix ----

/// AllReduce sum of testInputs over all ranks, computed on the host.
std::vector<float> expectedSum(int n, uint64_t count, uint64_t seed) {
  std::vector<float> want(count);
  for (int q = 0; q < n; ++q) {
    std::vector<char> in = testInputs(DataType::Float32, q, count, seed);
    for (uint64_t i = 0; i < count; ++i) {
      float v;
      std::memcpy(&v, in.data() + i * 4, 4);
      want[i] = q == 0 ? v : want[i] + v;
    }
  }
  return want;
}

// LL at 256 floats; at 1 MiB + 3 floats the Auto object runs zero-copy where capture-time registration
// is on (it maps the unregistered buffers at capture), staged where it is off; the Staged object runs
// through scratch.
TEST_F(CollectivesMpTest, GraphReplayedAThousandTimesKeepsWorking) {
  COLL_REQUIRE_GPU();
  for (Collectives* object : {&coll(), shared().staged.get()}) {
    for (uint64_t count : {uint64_t{256}, uint64_t{(1 << 20) + 3}}) {
      shared().kept.push_back(std::make_unique<DeviceBytes>(count * 4));
      DeviceBytes& send = *shared().kept.back();
      shared().kept.push_back(std::make_unique<DeviceBytes>(count * 4));
      DeviceBytes& recv = *shared().kept.back();
      ASSERT_NE(send.ptr, nullptr);
      ASSERT_NE(recv.ptr, nullptr);
      std::vector<char> in = testInputs(DataType::Float32, rank, count, 11);
      CUDA_OK(upload(send.ptr, in.data(), count * 4));
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      object->allReduce(send.ptr, recv.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
      CUDA_OK(cudaStreamEndCapture(stream, &graph));
      CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
      for (int i = 0; i < 999; ++i) CUDA_OK(cudaGraphLaunch(exec, stream));
      CUDA_OK(cudaMemsetAsync(recv.ptr, 0, count * 4, stream));
      CUDA_OK(cudaGraphLaunch(exec, stream));
      CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<float> got(count);
      CUDA_OK(cudaMemcpy(got.data(), recv.ptr, count * 4, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, expectedSum(nRanks, count, 11))
          << count << " elements, "
          << mscclpp::collectives::algorithmName(object->algorithmFor(Collective::AllReduce, count * 4));
      (void)cudaGraphExecDestroy(exec);
      (void)cudaGraphDestroy(graph);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

// The bandwidth paths at 1 MiB + 3 floats, called back to back with no host synchronization in
// between, each call with its own input and output: a call that reads scratch before a peer finished
// writing it, or writes a slot a peer has not read yet, leaves a wrong part in some output, which
// the next call cannot mask. All-gather (pairwise) and all-reduce (two-shot LL at this size) alternate,
// in place and out of place, so consecutive calls also hand the same slots, barrier counts and LL
// epochs from one kernel to the other, with misaligned in-place segments (1 MiB + 12 bytes per rank)
// taking the byte-wise paths.
TEST_F(CollectivesMpTest, BackToBackCallsAtOneMiBPlus3KeepEveryResult) {
  COLL_REQUIRE_GPU();
  constexpr int kCalls = 32;
  constexpr uint64_t kSeed = 200;
  const int n = nRanks;
  const uint64_t count = (1 << 20) / 4 + 3, bytes = count * 4;
  auto isGather = [](int i) { return i % 2 == 0; };
  auto isInPlace = [](int i) { return i % 4 >= 2; };
  std::vector<std::unique_ptr<DeviceBytes>> sends, recvs;
  std::vector<char*> sendPtrs;
  for (int i = 0; i < kCalls; ++i) {
    recvs.push_back(std::make_unique<DeviceBytes>(isGather(i) ? bytes * n : bytes));
    sends.push_back(std::make_unique<DeviceBytes>(isInPlace(i) ? 0 : bytes));
    ASSERT_NE(recvs[i]->ptr, nullptr);
    ASSERT_NE(sends[i]->ptr, nullptr);
    char* send = isInPlace(i) ? recvs[i]->ptr + (isGather(i) ? rank * bytes : 0) : sends[i]->ptr;
    CUDA_OK(upload(send, testInputs(DataType::Float32, rank, count, kSeed + i).data(), bytes));
    sendPtrs.push_back(send);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every rank's calls start together, so their kernels overlap
  for (int i = 0; i < kCalls; ++i) {
    if (isGather(i)) {
      coll().allGather(sendPtrs[i], recvs[i]->ptr, count, DataType::Float32, stream);
    } else {
      coll().allReduce(sendPtrs[i], recvs[i]->ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
    }
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  for (int i = 0; i < kCalls; ++i) {
    if (isGather(i)) {
      std::vector<char> got(bytes * n);
      CUDA_OK(cudaMemcpy(got.data(), recvs[i]->ptr, got.size(), cudaMemcpyDeviceToHost));
      for (int q = 0; q < n; ++q) {
        EXPECT_EQ(std::memcmp(got.data() + q * bytes, testInputs(DataType::Float32, q, count, kSeed + i).data(), bytes),
                  0)
            << "call " << i << " (all-gather" << (isInPlace(i) ? ", in place" : "") << "): part of rank " << q;
      }
    } else {
      std::vector<float> got(count);
      CUDA_OK(cudaMemcpy(got.data(), recvs[i]->ptr, bytes, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, expectedSum(n, count, kSeed + i))
          << "call " << i << " (all-reduce" << (isInPlace(i) ? ", in place" : "") << ")";
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, TwoObjectsInFlightOnTwoStreams) {
  COLL_REQUIRE_GPU();
  cudaStream_t other;
  CUDA_OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  const uint64_t count = 100003;
  DeviceBytes sendA(count * 4), recvA(count * 4), sendB(count * 4), recvB(count * 4 * nRanks);
  std::vector<char> in = testInputs(DataType::Float32, rank, count, 5);
  CUDA_OK(upload(sendA.ptr, in.data(), count * 4));
  CUDA_OK(upload(sendB.ptr, in.data(), count * 4));
  for (int i = 0; i < 50; ++i) {
    coll().allReduce(sendA.ptr, recvA.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
    shared().second->allGather(sendB.ptr, recvB.ptr, count, DataType::Float32, other);
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaStreamSynchronize(other));
  std::vector<float> gotA(count);
  CUDA_OK(cudaMemcpy(gotA.data(), recvA.ptr, count * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(gotA, expectedSum(nRanks, count, 5));
  std::vector<char> gotB(count * 4 * nRanks);
  CUDA_OK(cudaMemcpy(gotB.data(), recvB.ptr, gotB.size(), cudaMemcpyDeviceToHost));
  for (int q = 0; q < nRanks; ++q) {
    EXPECT_EQ(std::memcmp(gotB.data() + q * count * 4, testInputs(DataType::Float32, q, count, 5).data(), count * 4), 0)
        << "all-gather part of rank " << q;
  }
  (void)cudaStreamDestroy(other);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, AllToAllvMovesUnevenCounts) {
  COLL_REQUIRE_GPU();
  const int n = nRanks;
  // Rank r sends (r + 1) * 1000 + p elements to p.
  auto countFrom = [](int r, int p) { return static_cast<size_t>((r + 1) * 1000 + p); };
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t sTotal = 0, rTotal = 0;
  for (int p = 0; p < n; ++p) {
    sc[p] = countFrom(rank, p);
    sd[p] = sTotal;
    sTotal += sc[p];
    rc[p] = countFrom(p, rank);
    rd[p] = rTotal;
    rTotal += rc[p];
  }
  std::vector<char> in = testInputs(DataType::Int32, rank, sTotal, 9);
  DeviceBytes send(sTotal * 4), recv(rTotal * 4);
  CUDA_OK(upload(send.ptr, in.data(), sTotal * 4));
  coll().allToAllv(send.ptr, sc, sd, recv.ptr, rc, rd, DataType::Int32, stream);
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<char> got(rTotal * 4);
  CUDA_OK(cudaMemcpy(got.data(), recv.ptr, got.size(), cudaMemcpyDeviceToHost));
  for (int p = 0; p < n; ++p) {
    size_t offset = 0;
    for (int q = 0; q < rank; ++q) offset += countFrom(p, q);
    std::vector<char> theirs = testInputs(DataType::Int32, p, offset + rc[p], 9);
    EXPECT_EQ(std::memcmp(got.data() + rd[p] * 4, theirs.data() + offset * 4, rc[p] * 4), 0) << "from rank " << p;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, GroupedRingSendRecvInAnyOrder) {
  COLL_REQUIRE_GPU();
  const int next = (rank + 1) % nRanks, prev = (rank + nRanks - 1) % nRanks;
  for (uint64_t count : {uint64_t{1}, uint64_t{777}, uint64_t{(1 << 20) + 3}}) {
    std::vector<char> in = testInputs(DataType::Uint8, rank, count, 13);
    DeviceBytes send(count), recv(count);
    CUDA_OK(upload(send.ptr, in.data(), count));
    coll().groupStart();
    // Odd ranks post the receive first: grouping must make the order irrelevant.
    if (rank % 2) coll().recv(recv.ptr, count, DataType::Uint8, prev, stream);
    coll().send(send.ptr, count, DataType::Uint8, next, stream);
    if (rank % 2 == 0) coll().recv(recv.ptr, count, DataType::Uint8, prev, stream);
    coll().groupEnd();
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<char> got(count);
    CUDA_OK(cudaMemcpy(got.data(), recv.ptr, count, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, testInputs(DataType::Uint8, prev, count, 13)) << count;
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST_F(CollectivesMpTest, UngroupedSendThenRecvBetweenAPair) {
  COLL_REQUIRE_GPU();
  if (nRanks < 2) GTEST_SKIP() << "needs two ranks";
  const uint64_t count = 5000;
  DeviceBytes buf(count * 8);
  if (rank == 0) {
    std::vector<char> in = testInputs(DataType::Float64, 0, count, 2);
    CUDA_OK(upload(buf.ptr, in.data(), count * 8));
    coll().send(buf.ptr, count, DataType::Float64, 1, stream);
    coll().recv(buf.ptr, count, DataType::Float64, 1, stream);
  } else if (rank == 1) {
    coll().recv(buf.ptr, count, DataType::Float64, 0, stream);
    coll().send(buf.ptr, count, DataType::Float64, 0, stream);
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  if (rank <= 1) {
    std::vector<char> got(count * 8);
    CUDA_OK(cudaMemcpy(got.data(), buf.ptr, got.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, testInputs(DataType::Float64, 0, count, 2)) << "the data made the round trip";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Rank 0's tuning file decides for every rank, whatever the others were given; a file with a bad line
// fails construction on every rank, naming the line.
TEST_F(CollectivesMpTest, RankZerosTuningFileDecidesForEveryRank) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  const std::string path = "/tmp/mscclpp-tuning-" + std::to_string(::getpid()) + ".txt";
  auto write = [&](const char* text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text, f);
    std::fclose(f);
  };
  if (rank == 0) write("# all-reduce through scratch at every size\nallreduce * 0 any staged\n");
  mscclpp::collectives::Config tuned;
  tuned.tuningFile = rank == 0 ? path : "";
  {
    Collectives c(shared().comm, tuned);
    EXPECT_EQ(c.algorithmFor(Collective::AllReduce, 64, false), Algorithm::Staged);
    EXPECT_EQ(c.algorithmFor(Collective::AllGather, 64, false), Algorithm::LLOneShot) << "no rule: Auto";
    const uint64_t count = 1001;
    DeviceBytes send(count * 4), recv(count * 4);
    CUDA_OK(upload(send.ptr, testInputs(DataType::Float32, rank, count, 5).data(), count * 4));
    c.allReduce(send.ptr, recv.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), recv.ptr, count * 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expectedSum(nRanks, count, 5));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) write("allreduce * 0 any staged\nallreduce * 0 any quick\n");
  try {
    Collectives c(shared().comm, tuned);
    ADD_FAILURE() << "a tuning file with a bad line was accepted";
  } catch (const mscclpp::Error& e) {
    EXPECT_EQ(e.getErrorCode(), mscclpp::ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(e.what()).find(":2: algorithm 'quick'"), std::string::npos) << e.what();
  }
  if (rank == 0) std::remove(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, NoDeviceMemoryGrowthOverTenThousandCalls) {
  COLL_REQUIRE_GPU();
  DeviceBytes send(1 << 20), recv(1 << 20);
  CUDA_OK(fill(send.ptr, 0, 1 << 20));
  // Warm up, so that lazily created runtime state exists before the first measurement.
  coll().allReduce(send.ptr, recv.ptr, 64, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
  coll().allReduce(send.ptr, recv.ptr, 1 << 18, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
  CUDA_OK(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);
  size_t freeBefore = 0, freeAfter = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&freeBefore, &total));
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 10000; ++i) {
    const uint64_t count = i % 2 ? 64 : (1 << 14) + i % 7;
    coll().allReduce(send.ptr, recv.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);
  CUDA_OK(cudaMemGetInfo(&freeAfter, &total));
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(freeAfter, freeBefore);
}

// ---- zero-copy on registered buffers ----

/// A registration of `ptr` on `c` for the scope, removed (collectively) at its end.
struct Registration {
  Collectives& c;
  void* ptr;
  Registration(Collectives& coll, void* p, size_t bytes) : c(coll), ptr(p) { c.registerBuffer(p, bytes); }
  ~Registration() {
    try {
      c.deregisterBuffer(ptr);
    } catch (const Error& e) {
      ADD_FAILURE() << "deregisterBuffer: " << e.what();
    }
  }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
};

// Auto runs a registered all-reduce above the two-shot LL sizes zero-copy, and the same call on
// unregistered buffers through scratch; both give every result.
TEST_F(CollectivesMpTest, RegisteredBuffersRunZeroCopyUnderAuto) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  const uint64_t count = (4 << 20) / 4 + 3, bytes = count * 4;
  DeviceBytes send(bytes), recv(bytes);
  CUDA_OK(upload(send.ptr, testInputs(DataType::Float32, rank, count, 31).data(), bytes));
  EXPECT_EQ(coll().algorithmFor(Collective::AllReduce, bytes, true), Algorithm::ZeroCopy);
  EXPECT_EQ(coll().algorithmFor(Collective::AllReduce, bytes, false), Algorithm::Staged);
  for (bool registered : {true, false}) {
    CUDA_OK(cudaMemsetAsync(recv.ptr, 0, bytes, stream));
    {
      std::unique_ptr<Registration> rs, rr;
      if (registered) {
        rs = std::make_unique<Registration>(coll(), send.ptr, bytes);
        rr = std::make_unique<Registration>(coll(), recv.ptr, bytes);
      }
      coll().allReduce(send.ptr, recv.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
      CUDA_OK(cudaStreamSynchronize(stream));
    }
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), recv.ptr, bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expectedSum(nRanks, count, 31)) << (registered ? "registered" : "unregistered");
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST_F(CollectivesMpTest, ZeroCopyGraphReplayedAHundredTimesKeepsWorking) {
  COLL_REQUIRE_GPU();
  const uint64_t count = (1 << 20) + 3, bytes = count * 4;
  DeviceBytes send(bytes), recv(bytes), gathered(bytes * nRanks);
  CUDA_OK(upload(send.ptr, testInputs(DataType::Float32, rank, count, 17).data(), bytes));
  Registration rs(zeroCopy(), send.ptr, bytes), rr(zeroCopy(), recv.ptr, bytes),
      rg(zeroCopy(), gathered.ptr, bytes * nRanks);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  zeroCopy().allReduce(send.ptr, recv.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
  zeroCopy().allGather(send.ptr, gathered.ptr, count, DataType::Float32, stream);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 99; ++i) CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaMemsetAsync(recv.ptr, 0, bytes, stream));
  CUDA_OK(cudaMemsetAsync(gathered.ptr, 0, bytes * nRanks, stream));
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<float> got(count);
  CUDA_OK(cudaMemcpy(got.data(), recv.ptr, bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, expectedSum(nRanks, count, 17));
  std::vector<char> all(bytes * nRanks);
  CUDA_OK(cudaMemcpy(all.data(), gathered.ptr, all.size(), cudaMemcpyDeviceToHost));
  for (int q = 0; q < nRanks; ++q) {
    EXPECT_EQ(std::memcmp(all.data() + q * bytes, testInputs(DataType::Float32, q, count, 17).data(), bytes), 0)
        << "all-gather part of rank " << q;
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Zero-copy at counts that are not a multiple of 16 bytes (a reduce-scatter slice then starts off a
// 16-byte boundary on every rank but 0) and from buffers 0, 4 and 8 bytes past the registered pointer:
// each kernel must use only accesses its addresses are aligned for, and still give every result.
// Zero-copy calls under a tuning file's block counts (1, 2 and 3 blocks, where Auto would take up to
// Config::maxBlocks): each block then covers a larger part, and every rank must still cut the same
// parts; every result is checked.
TEST_F(CollectivesMpTest, TunedZeroCopyBlockCountsKeepEveryResult) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  const std::string path = "/tmp/mscclpp-tuning-blocks-" + std::to_string(::getpid()) + ".txt";
  if (rank == 0) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(
        "allreduce * 0 registered zerocopy 3\nreducescatter * 0 registered zerocopy 2\n"
        "allgather * 0 registered zerocopy 1\n",
        f);
    std::fclose(f);
  }
  mscclpp::collectives::Config tuned;
  tuned.tuningFile = rank == 0 ? path : "";
  {
    Collectives c(shared().comm, tuned);
    const ReduceOp sum(ReduceOp::Kind::Sum);
    const uint64_t count = (uint64_t{1} << 20) + 3, bytes = count * 4, total = bytes * nRanks;
    for (Collective coll : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather}) {
      ASSERT_EQ(c.algorithmFor(coll, bytes, true), Algorithm::ZeroCopy) << mscclpp::collectives::collectiveName(coll);
    }
    DeviceBytes send(total), recv(total);
    ASSERT_NE(send.ptr, nullptr);
    ASSERT_NE(recv.ptr, nullptr);
    Registration rs(c, send.ptr, send.bytes), rr(c, recv.ptr, recv.bytes);
    const std::vector<float> sums = expectedSum(nRanks, count * nRanks, 33);
    CUDA_OK(upload(send.ptr, testInputs(DataType::Float32, rank, count * nRanks, 33).data(), total));
    MPI_Barrier(MPI_COMM_WORLD);
    c.allReduce(send.ptr, recv.ptr, count * nRanks, DataType::Float32, sum, stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<float> got(count * nRanks);
    CUDA_OK(cudaMemcpy(got.data(), recv.ptr, total, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, sums) << "all-reduce on 3 blocks";
    MPI_Barrier(MPI_COMM_WORLD);
    c.reduceScatter(send.ptr, recv.ptr, count, DataType::Float32, sum, stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    got.resize(count);
    CUDA_OK(cudaMemcpy(got.data(), recv.ptr, bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, std::vector<float>(sums.begin() + rank * count, sums.begin() + (rank + 1) * count))
        << "reduce-scatter on 2 blocks";
    MPI_Barrier(MPI_COMM_WORLD);
    c.allGather(send.ptr, recv.ptr, count, DataType::Float32, stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<char> all(total);
    CUDA_OK(cudaMemcpy(all.data(), recv.ptr, total, cudaMemcpyDeviceToHost));
    for (int q = 0; q < nRanks; ++q) {
      EXPECT_EQ(std::memcmp(all.data() + q * bytes, testInputs(DataType::Float32, q, count * nRanks, 33).data(), bytes),
                0)
          << "all-gather on 1 block, part of rank " << q;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) std::remove(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, ZeroCopyAtOddCountsAndOffsetsKeepsEveryResult) {
  COLL_REQUIRE_GPU();
  const ReduceOp sum(ReduceOp::Kind::Sum);
  for (uint64_t count : {uint64_t{1001}, (uint64_t{1} << 20) + 5}) {
    const uint64_t bytes = count * 4, total = bytes * nRanks;
    ASSERT_EQ(zeroCopy().algorithmFor(Collective::ReduceScatter, bytes, true), Algorithm::ZeroCopy);
    const std::vector<float> sums = expectedSum(nRanks, count * nRanks, 70);
    for (uint64_t offset : {uint64_t{0}, uint64_t{4}, uint64_t{8}}) {
      DeviceBytes send(total + 16), recv(total + 16);
      ASSERT_NE(send.ptr, nullptr);
      ASSERT_NE(recv.ptr, nullptr);
      Registration rs(zeroCopy(), send.ptr, send.bytes), rr(zeroCopy(), recv.ptr, recv.bytes);
      char* in = send.ptr + offset;
      char* out = recv.ptr + offset;
      const std::string where = std::to_string(count) + " elements at offset " + std::to_string(offset);
      CUDA_OK(upload(in, testInputs(DataType::Float32, rank, count * nRanks, 70).data(), total));
      zeroCopy().reduceScatter(in, out, count, DataType::Float32, sum, stream);
      CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<float> got(count);
      CUDA_OK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, std::vector<float>(sums.begin() + rank * count, sums.begin() + (rank + 1) * count))
          << "reduce-scatter, " << where;
      zeroCopy().allReduce(in, out, count * nRanks, DataType::Float32, sum, stream);
      CUDA_OK(cudaStreamSynchronize(stream));
      got.resize(count * nRanks);
      CUDA_OK(cudaMemcpy(got.data(), out, total, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, sums) << "all-reduce, " << where;
      zeroCopy().allGather(in, out, count, DataType::Float32, stream);
      CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<char> all(total);
      CUDA_OK(cudaMemcpy(all.data(), out, total, cudaMemcpyDeviceToHost));
      for (int q = 0; q < nRanks; ++q) {
        EXPECT_EQ(std::memcmp(all.data() + q * bytes, testInputs(DataType::Float32, q, count, 70).data(), bytes), 0)
            << "all-gather part of rank " << q << ", " << where;
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

// Zero-copy calls between staged, two-shot and one-shot LL calls of the same object, no host
// synchronization in between, in place and out of place: a zero-copy call that wrote a peer's output
// before the peer's previous call finished with it, or returned before every peer had written its
// output, leaves a wrong part; so does an LL call that overwrote packets a peer had not read.
TEST_F(CollectivesMpTest, ZeroCopyBackToBackWithTheOtherPathsKeepsEveryResult) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  constexpr int kCalls = 24;
  constexpr uint64_t kSeed = 400;
  // From kMixedZeroCopyBytes, so that `mixed` runs zero-copy on registered buffers and staged on others.
  const uint64_t count = kMixedZeroCopyBytes / 4 + 3, bytes = count * 4;
  Collectives& mixed = *shared().mixed;
  const uint64_t midCount = (1 << 20) / 4 - 1, smallCount = 64;  // two-shot and one-shot LL
  auto isRegistered = [](int i) { return i % 3 != 2; };
  auto isInPlace = [](int i) { return i % 2 == 1; };
  ASSERT_EQ(mixed.algorithmFor(Collective::AllReduce, bytes, true), Algorithm::ZeroCopy);
  ASSERT_EQ(mixed.algorithmFor(Collective::AllReduce, bytes, false), Algorithm::Staged);
  ASSERT_EQ(mixed.algorithmFor(Collective::AllReduce, midCount * 4, false), Algorithm::LLTwoShot);
  ASSERT_EQ(mixed.algorithmFor(Collective::AllReduce, smallCount * 4, false), Algorithm::LLOneShot);
  DeviceBytes pool(2 * kCalls * bytes);  // one allocation: one registration covers every call's buffers
  ASSERT_NE(pool.ptr, nullptr);
  DeviceBytes plain(2 * kCalls * bytes);
  ASSERT_NE(plain.ptr, nullptr);
  DeviceBytes mid(2 * midCount * 4), small(2 * smallCount * 4);
  ASSERT_NE(mid.ptr, nullptr);
  ASSERT_NE(small.ptr, nullptr);
  CUDA_OK(upload(mid.ptr, testInputs(DataType::Float32, rank, midCount, kSeed).data(), midCount * 4));
  CUDA_OK(upload(small.ptr, testInputs(DataType::Float32, rank, smallCount, kSeed).data(), smallCount * 4));
  Registration reg(mixed, pool.ptr, pool.bytes);
  std::vector<char*> sends(kCalls), recvs(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    char* base = (isRegistered(i) ? pool.ptr : plain.ptr) + 2 * i * bytes;
    recvs[i] = base;
    sends[i] = isInPlace(i) ? base : base + bytes;
    CUDA_OK(upload(sends[i], testInputs(DataType::Float32, rank, count, kSeed + i).data(), bytes));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const ReduceOp sum(ReduceOp::Kind::Sum);
  for (int i = 0; i < kCalls; ++i) {
    mixed.allReduce(sends[i], recvs[i], count, DataType::Float32, sum, stream);
    mixed.allReduce(mid.ptr, mid.ptr + midCount * 4, midCount, DataType::Float32, sum, stream);
    mixed.allReduce(small.ptr, small.ptr + smallCount * 4, smallCount, DataType::Float32, sum, stream);
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  for (int i = 0; i < kCalls; ++i) {
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), recvs[i], bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expectedSum(nRanks, count, kSeed + i))
        << "call " << i << (isRegistered(i) ? " (zero-copy" : " (staged") << (isInPlace(i) ? ", in place)" : ")");
  }
  std::vector<float> gotMid(midCount), gotSmall(smallCount);
  CUDA_OK(cudaMemcpy(gotMid.data(), mid.ptr + midCount * 4, midCount * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(gotSmall.data(), small.ptr + smallCount * 4, smallCount * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(gotMid, expectedSum(nRanks, midCount, kSeed)) << "the last two-shot call";
  EXPECT_EQ(gotSmall, expectedSum(nRanks, smallCount, kSeed)) << "the last one-shot call";
  MPI_Barrier(MPI_COMM_WORLD);
}

// One registered input reused by every call, refilled on the stream right before each zero-copy
// reduce-scatter and all-reduce, no host synchronization in between: a call whose first barrier let a
// peer read the input before the refill, or which returned before every peer had finished reading it
// (the reduce-scatter's close tells only that the loads returned), leaves a wrong result.
TEST_F(CollectivesMpTest, ZeroCopyInputRefilledRightAfterEachCallKeepsEveryResult) {
  COLL_REQUIRE_GPU();
  constexpr int kCalls = 16;
  constexpr uint64_t kSeed = 600;
  const uint64_t count = uint64_t{1} << 16, total = count * nRanks, bytes = total * 4;
  const ReduceOp sum(ReduceOp::Kind::Sum);
  for (Collective c : {Collective::ReduceScatter, Collective::AllReduce}) {
    ASSERT_EQ(zeroCopy().algorithmFor(c, c == Collective::AllReduce ? bytes : count * 4, true), Algorithm::ZeroCopy);
    const uint64_t outBytes = c == Collective::AllReduce ? bytes : count * 4;
    DeviceBytes staged(kCalls * bytes), in(bytes), outs(kCalls * outBytes);
    ASSERT_NE(staged.ptr, nullptr);
    ASSERT_NE(in.ptr, nullptr);
    ASSERT_NE(outs.ptr, nullptr);
    for (int i = 0; i < kCalls; ++i) {
      CUDA_OK(upload(staged.ptr + i * bytes, testInputs(DataType::Float32, rank, total, kSeed + i).data(), bytes));
    }
    Registration rin(zeroCopy(), in.ptr, bytes), rout(zeroCopy(), outs.ptr, outs.bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < kCalls; ++i) {
      CUDA_OK(cudaMemcpyAsync(in.ptr, staged.ptr + i * bytes, bytes, cudaMemcpyDeviceToDevice, stream));
      if (c == Collective::ReduceScatter) {
        zeroCopy().reduceScatter(in.ptr, outs.ptr + i * outBytes, count, DataType::Float32, sum, stream);
      } else {
        zeroCopy().allReduce(in.ptr, outs.ptr + i * outBytes, total, DataType::Float32, sum, stream);
      }
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int i = 0; i < kCalls; ++i) {
      const std::vector<float> sums = expectedSum(nRanks, total, kSeed + i);
      const std::vector<float> want =
          c == Collective::AllReduce
              ? sums
              : std::vector<float>(sums.begin() + rank * count, sums.begin() + (rank + 1) * count);
      std::vector<float> got(want.size());
      CUDA_OK(cudaMemcpy(got.data(), outs.ptr + i * outBytes, outBytes, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, want) << mscclpp::collectives::collectiveName(c) << ", call " << i;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// NCCL lets each rank choose on its own to gather in place (send = recv + rank x count) or from a
// separate input. Zero-copy all-gathers with the even ranks in place and the odd ones not, then the
// reverse, then every rank in place, then none, back to back without host synchronization: every
// output, filled with a sentinel before, must hold every rank's part.
TEST_F(CollectivesMpTest, ZeroCopyAllGatherWithRanksInAndOutOfPlaceKeepsEveryResult) {
  COLL_REQUIRE_GPU();
  constexpr uint64_t kSeed = 900;
  for (uint64_t count : {uint64_t{1} << 16, uint64_t{1} << 18}) {
    const uint64_t bytes = count * 4, total = bytes * nRanks;
    ASSERT_EQ(zeroCopy().algorithmFor(Collective::AllGather, bytes, true), Algorithm::ZeroCopy);
    // Four rounds: even ranks in place, odd ranks in place, every rank, none.
    constexpr int kRounds = 4;
    const auto inPlace = [&](int round) {
      return round == 0 ? rank % 2 == 0 : round == 1 ? rank % 2 == 1 : round == 2;
    };
    DeviceBytes outs(kRounds * total), send(bytes);
    ASSERT_NE(outs.ptr, nullptr);
    ASSERT_NE(send.ptr, nullptr);
    Registration ro(zeroCopy(), outs.ptr, outs.bytes);
    const std::vector<char> mine = testInputs(DataType::Float32, rank, count, kSeed);
    CUDA_OK(fill(outs.ptr, kSentinel, outs.bytes));
    CUDA_OK(upload(send.ptr, mine.data(), bytes));
    for (int round = 0; round < kRounds; ++round) {
      if (inPlace(round)) CUDA_OK(upload(outs.ptr + round * total + rank * bytes, mine.data(), bytes));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < kRounds; ++round) {
      char* out = outs.ptr + round * total;
      zeroCopy().allGather(inPlace(round) ? out + rank * bytes : send.ptr, out, count, DataType::Float32, stream);
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int round = 0; round < kRounds; ++round) {
      std::vector<char> all(total);
      CUDA_OK(cudaMemcpy(all.data(), outs.ptr + round * total, total, cudaMemcpyDeviceToHost));
      for (int q = 0; q < nRanks; ++q) {
        EXPECT_EQ(std::memcmp(all.data() + q * bytes, testInputs(DataType::Float32, q, count, kSeed).data(), bytes), 0)
            << "part of rank " << q << ", round " << round << " (" << (inPlace(round) ? "in" : "out of")
            << " place here), " << count << " elements";
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST_F(CollectivesMpTest, ReregisteredAfterFreeAndReallocationAtTheSameAddress) {
  COLL_REQUIRE_GPU();
  const uint64_t count = (2 << 20) / 4, bytes = count * 4;
  char* buf = nullptr;
  for (int round = 0; round < 2; ++round) {
    CUDA_OK(cudaMalloc(&buf, bytes));
    CUDA_OK(upload(buf, testInputs(DataType::Float32, rank, count, 50 + round).data(), bytes));
    {
      Registration reg(zeroCopy(), buf, bytes);
      zeroCopy().allReduce(buf, buf, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
      CUDA_OK(cudaStreamSynchronize(stream));
    }
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), buf, bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expectedSum(nRanks, count, 50 + round)) << "round " << round;
    CUDA_OK(cudaFree(buf));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Every rank frees its registered buffer without deregistering it and allocates a new one of the same
// size. Where the new allocation lies at the registered address, the call must refuse to run (peers
// would write into memory that is no longer the registered buffer); elsewhere it is unregistered and
// runs through scratch.
TEST_F(CollectivesMpTest, BufferFreedWithoutDeregistrationIsNeverWrittenByPeers) {
  COLL_REQUIRE_GPU();
  const uint64_t count = (2 << 20) / 4, bytes = count * 4;
  char* old = nullptr;
  CUDA_OK(cudaMalloc(&old, bytes));
  zeroCopy().registerBuffer(old, bytes);
  CUDA_OK(cudaFree(old));
  char* fresh = nullptr;
  CUDA_OK(cudaMalloc(&fresh, bytes));
  CUDA_OK(upload(fresh, testInputs(DataType::Float32, rank, count, 60).data(), bytes));
  // The calls below are collective only if every rank's buffer took the same place.
  const bool sameAddress = fresh == old;
  ASSERT_TRUE(allRanks(sameAddress) || allRanks(!sameAddress)) << "ranks' allocators disagree; rerun";
  if (sameAddress) {
    EXPECT_THROW(zeroCopy().allReduce(fresh, fresh, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream),
                 Error);
  } else {
    zeroCopy().allReduce(fresh, fresh, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), fresh, bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expectedSum(nRanks, count, 60));
  }
  zeroCopy().deregisterBuffer(old);
  CUDA_OK(cudaFree(fresh));
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, RegistrationRefusedByOneRankIsRefusedByEvery) {
  COLL_REQUIRE_GPU();
  DeviceBytes buf(1 << 16);
  ASSERT_NE(buf.ptr, nullptr);
  // Rank 0 passes a null buffer: every rank must throw, and none may keep a registration.
  EXPECT_THROW(zeroCopy().registerBuffer(rank == 0 ? nullptr : buf.ptr, buf.bytes), Error);
  if (nRanks > 1) {
    EXPECT_THROW(zeroCopy().registerBuffer(buf.ptr, rank == 0 ? 4096 : 8192), Error) << "sizes differ";
  }
  // Host memory is not device memory.
  std::vector<char> host(64);
  EXPECT_THROW(zeroCopy().registerBuffer(rank == nRanks - 1 ? host.data() : buf.ptr, host.size()), Error);
  {
    Registration reg(zeroCopy(), buf.ptr, buf.bytes);
    EXPECT_THROW(zeroCopy().registerBuffer(buf.ptr + 64, 64), Error) << "overlaps a registration";
  }
  // Everything above was rolled back: the buffer registers again, and deregisters once.
  zeroCopy().registerBuffer(buf.ptr, buf.bytes);
  zeroCopy().deregisterBuffer(buf.ptr);
  EXPECT_THROW(zeroCopy().deregisterBuffer(buf.ptr), Error) << "deregistered twice";
  MPI_Barrier(MPI_COMM_WORLD);
}

// Deregistration must close every peer's mapping it opened: a mapping left open makes the next
// registration of a new allocation at the same place fail to map (or reach the old memory). Small
// buffers, registered, used, deregistered and freed in rounds, land where the previous round's lay.
TEST_F(CollectivesMpTest, DeregistrationUnmapsEveryPeerBuffer) {
  COLL_REQUIRE_GPU();
  const uint64_t count = 1024, bytes = count * 4;
  for (int round = 0; round < 4; ++round) {
    DeviceBytes a(bytes), b(bytes);
    ASSERT_NE(a.ptr, nullptr);
    ASSERT_NE(b.ptr, nullptr);
    CUDA_OK(upload(a.ptr, testInputs(DataType::Float32, rank, count, 80 + round).data(), bytes));
    {
      Registration ra(zeroCopy(), a.ptr, a.bytes), rb(zeroCopy(), b.ptr, b.bytes);
      zeroCopy().allReduce(a.ptr, b.ptr, count, DataType::Float32, ReduceOp(ReduceOp::Kind::Sum), stream);
      CUDA_OK(cudaStreamSynchronize(stream));
    }
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), b.ptr, bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expectedSum(nRanks, count, 80 + round)) << "round " << round;
  }
}

TEST_F(CollectivesMpTest, DeregistrationNamingDifferentBuffersIsRefusedByEvery) {
  COLL_REQUIRE_GPU();
  if (nRanks < 2) GTEST_SKIP() << "needs two ranks";
  DeviceBytes a(4096), b(4096);
  Registration ra(zeroCopy(), a.ptr, a.bytes), rb(zeroCopy(), b.ptr, b.bytes);
  EXPECT_THROW(zeroCopy().deregisterBuffer(rank == 0 ? a.ptr : b.ptr), Error);
  EXPECT_THROW(zeroCopy().deregisterBuffer(rank == 0 ? a.ptr + 16 : a.ptr), Error) << "not a registered pointer";
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(CollectivesMpTest, BadArgumentsAreRejected) {
  COLL_REQUIRE_GPU();
  DeviceBytes buf(256);
  const ReduceOp sum(ReduceOp::Kind::Sum);
  EXPECT_THROW(coll().allReduce(nullptr, buf.ptr, 4, DataType::Float32, sum, stream), Error);
  EXPECT_THROW(coll().allReduce(buf.ptr + 1, buf.ptr, 4, DataType::Float32, sum, stream), Error)
      << "misaligned for float";
  EXPECT_THROW(coll().broadcast(buf.ptr, buf.ptr, 4, DataType::Float32, nRanks, stream), Error);
  EXPECT_THROW(coll().reduce(buf.ptr, buf.ptr, 4, DataType::Float32, sum, -1, stream), Error);
  EXPECT_THROW(coll().send(buf.ptr, 4, DataType::Float32, nRanks, stream), Error);
  EXPECT_THROW(coll().send(buf.ptr, 4, DataType::Float32, rank, stream), Error) << "self send outside a group";
  EXPECT_THROW(coll().groupEnd(), Error) << "groupEnd without groupStart";
  coll().groupStart();
  EXPECT_THROW(coll().groupStart(), Error) << "nested group";
  EXPECT_THROW(coll().allReduce(buf.ptr, buf.ptr, 4, DataType::Float32, sum, stream), Error)
      << "collective inside a group";
  coll().groupEnd();
  // Counts whose byte size wraps, and counts whose byte size fits in 64 bits but is more than a buffer
  // of one call may hold (2^56 bytes), are refused on every rank before anything is launched.
  auto refused = [&](const char* what, size_t count, const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << what << " of " << count << " floats was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.getErrorCode(), mscclpp::ErrorCode::InvalidUsage) << what;
      EXPECT_NE(std::string(e.what()).find("bytes a buffer of one call may hold"), std::string::npos) << e.what();
    }
  };
  const int next = (rank + 1) % nRanks;
  auto perRankCalls = [&](size_t c) {
    refused("allGather", c, [&] { coll().allGather(buf.ptr, buf.ptr, c, DataType::Float32, stream); });
    refused("reduceScatter", c, [&] { coll().reduceScatter(buf.ptr, buf.ptr, c, DataType::Float32, sum, stream); });
    refused("allToAll", c, [&] { coll().allToAll(buf.ptr, buf.ptr, c, DataType::Float32, stream); });
    refused("gather", c, [&] { coll().gather(buf.ptr, buf.ptr, c, DataType::Float32, 0, stream); });
    refused("scatter", c, [&] { coll().scatter(buf.ptr, buf.ptr, c, DataType::Float32, 0, stream); });
  };
  const size_t wraps = SIZE_MAX / 4 + 2;               // x 4 bytes wraps to 4
  const size_t pastLimit = (size_t{1} << 56) / 4 + 1;  // x 4 bytes is 4 more than 2^56
  for (size_t c : {wraps, pastLimit}) {
    refused("allReduce", c, [&] { coll().allReduce(buf.ptr, buf.ptr, c, DataType::Float32, sum, stream); });
    refused("reduce", c, [&] { coll().reduce(buf.ptr, buf.ptr, c, DataType::Float32, sum, 0, stream); });
    refused("broadcast", c, [&] { coll().broadcast(buf.ptr, buf.ptr, c, DataType::Float32, 0, stream); });
    refused("send", c, [&] { coll().send(buf.ptr, c, DataType::Float32, next, stream); });
    refused("recv", c, [&] { coll().recv(buf.ptr, c, DataType::Float32, next, stream); });
    perRankCalls(c);
    std::vector<size_t> counts(nRanks, 0), displs(nRanks, 0);
    counts[rank] = c;
    refused("allToAllv", c,
            [&] { coll().allToAllv(buf.ptr, counts, displs, buf.ptr, counts, displs, DataType::Float32, stream); });
  }
  // Fits alone, but not times the rank count: the calls with a buffer of count per rank refuse it.
  if (nRanks > 1) perRankCalls(pastLimit / nRanks + 1);
  // Nothing of the refused calls reached the GPU: the object still computes right.
  {
    std::vector<float> values(64, 1.f);
    CUDA_OK(cudaMemcpy(buf.ptr, values.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
    coll().allReduce(buf.ptr, buf.ptr, 64, DataType::Float32, sum, stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(values.data(), buf.ptr, 64 * sizeof(float), cudaMemcpyDeviceToHost));
    for (float v : values) ASSERT_EQ(v, static_cast<float>(nRanks));
  }
  const std::vector<size_t> tooShort(nRanks > 1 ? nRanks - 1 : 0);
  EXPECT_THROW(coll().allToAllv(buf.ptr, tooShort, tooShort, buf.ptr, tooShort, tooShort, DataType::Int8, stream),
               Error);
  MPI_Barrier(MPI_COMM_WORLD);
}

// ---- capture-time registration: unregistered buffers of a captured call, mapped at capture ----

/// A buffer inside a larger allocation of its own, at an offset that differs from rank to rank (as the
/// blocks of a caching allocator do), so that a peer must add the offset its owner reported.
struct OffsetBuffer {
  static constexpr size_t kSlack = 64 << 10;
  DeviceBytes block;
  char* ptr = nullptr;
  OffsetBuffer(size_t bytes, int rank, int salt) : block(bytes + kSlack) {
    if (block.ptr) ptr = block.ptr + offsetOf(rank, salt);
  }
  /// At most 14 pages plus 16 bytes per rank, within kSlack for up to 8 ranks (with room past the end
  /// for a guard and a shifted second buffer).
  static size_t offsetOf(int rank, int salt) { return static_cast<size_t>((rank * 5 + salt) % 15) * 4096 + 16 * rank; }
};

/// Whether capture-time registration is on in this process (MSCCLPP_COLL_CAPTURE_CACHE above 0).
bool captureRegistrationOn() { return mscclpp::env()->collCaptureCache > 0; }

class CollectivesCaptureMpTest : public CollectivesMpTest {
 protected:
  static constexpr int kRoot = 0;

  /// The mappings a rank should hold after captured calls on `perPeer` allocations of every peer: none
  /// when capture-time registration is off.
  size_t expectedMappings(size_t perPeer) const {
    return captureRegistrationOn() ? perPeer * static_cast<size_t>(nRanks - 1) : 0;
  }

  void issue(Collectives& object, Collective c, const char* send, char* recv, uint64_t count) {
    const ReduceOp sum(ReduceOp::Kind::Sum);
    switch (c) {
      case Collective::AllReduce:
        return object.allReduce(send, recv, count, DataType::Float32, sum, stream);
      case Collective::ReduceScatter:
        return object.reduceScatter(send, recv, count, DataType::Float32, sum, stream);
      case Collective::AllGather:
        return object.allGather(send, recv, count, DataType::Float32, stream);
      case Collective::Broadcast:
        return object.broadcast(send, recv, count, DataType::Float32, kRoot, stream);
      case Collective::AllToAll:
        return object.allToAll(send, recv, count, DataType::Float32, stream);
      case Collective::Reduce:
      case Collective::AllToAllv:
      case Collective::Gather:
      case Collective::Scatter:
      case Collective::SendRecv:
        break;
    }
    ADD_FAILURE() << "no capture-time registration test for " << mscclpp::collectives::collectiveName(c);
  }

  /// What this rank's recv holds after `c` on every rank's testInputs(seed).
  std::vector<char> expected(Collective c, uint64_t count, uint64_t seed) {
    const int n = nRanks;
    const uint64_t bytes = count * 4;
    std::vector<char> want;
    switch (c) {
      case Collective::AllReduce:
      case Collective::ReduceScatter: {
        const uint64_t elems = c == Collective::AllReduce ? count : count * n;
        const std::vector<float> sums = expectedSum(n, elems, seed);
        const float* mine = sums.data() + (c == Collective::AllReduce ? 0 : rank * count);
        want.assign(reinterpret_cast<const char*>(mine), reinterpret_cast<const char*>(mine + count));
        break;
      }
      case Collective::AllGather:
        for (int q = 0; q < n; ++q) {
          const std::vector<char> in = testInputs(DataType::Float32, q, count, seed);
          want.insert(want.end(), in.begin(), in.end());
        }
        break;
      case Collective::Broadcast:
        want = testInputs(DataType::Float32, kRoot, count, seed);
        break;
      case Collective::AllToAll:
        for (int q = 0; q < n; ++q) {
          const std::vector<char> in = testInputs(DataType::Float32, q, count * n, seed);
          want.insert(want.end(), in.begin() + rank * bytes, in.begin() + (rank + 1) * bytes);
        }
        break;
      case Collective::Reduce:
      case Collective::AllToAllv:
      case Collective::Gather:
      case Collective::Scatter:
      case Collective::SendRecv:
        break;
    }
    return want;
  }

  /// Uploads new inputs for `seed` to `send`, replays `exec`, and checks every element of `recv` and
  /// that the guard bytes past it are untouched.
  void replayAndCheck(cudaGraphExec_t exec, Collective c, uint64_t count, char* send, char* recv, uint64_t seed,
                      const std::string& what) {
    uint64_t sendElems, recvElems;
    bufferElements(c, count, nRanks, sendElems, recvElems);
    CUDA_OK(upload(send, testInputs(DataType::Float32, rank, sendElems, seed).data(), sendElems * 4));
    CUDA_OK(fill(recv, kSentinel, recvElems * 4 + kGuardBytes));
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's inputs are in place before any replay reads a peer's
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<char> got(recvElems * 4 + kGuardBytes);
    CUDA_OK(cudaMemcpy(got.data(), recv, got.size(), cudaMemcpyDeviceToHost));
    const std::vector<char> want = expected(c, count, seed);
    ASSERT_EQ(want.size(), recvElems * 4);
    size_t firstWrong = want.size();
    for (size_t i = 0; i < want.size() && firstWrong == want.size(); i += 4) {
      if (std::memcmp(got.data() + i, want.data() + i, 4) != 0) firstWrong = i / 4;
    }
    EXPECT_EQ(firstWrong, want.size()) << what << ": first wrong element " << firstWrong;
    EXPECT_EQ(std::vector<char>(got.begin() + want.size(), got.end()), std::vector<char>(kGuardBytes, kSentinel))
        << what << ": bytes past the output were written";
    MPI_Barrier(MPI_COMM_WORLD);  // no rank uploads the next inputs while a peer's replay still reads them
  }

  /// One call of `c` on unregistered buffers (each rank's at its own offset of its own allocation),
  /// captured into a graph on an object of its own, replayed three times with new inputs; the peer
  /// allocations mapped at capture are counted. The object goes before the buffers.
  void captureAndReplay(Collective c, uint64_t count, size_t allocationsPerPeer) {
    COLL_REQUIRE_GPU();
    COLL_REQUIRE_AUTO();
    uint64_t sendElems, recvElems;
    bufferElements(c, count, nRanks, sendElems, recvElems);
    OffsetBuffer send(sendElems * 4, rank, 1), recv(recvElems * 4 + kGuardBytes, rank, 2);
    ASSERT_NE(send.ptr, nullptr);
    ASSERT_NE(recv.ptr, nullptr);
    {
      Collectives object(shared().comm);
      const Algorithm registered = object.algorithmFor(c, count * 4, true);
      ASSERT_TRUE(registered == Algorithm::ZeroCopy || registered == Algorithm::CopyEngine)
          << mscclpp::collectives::algorithmName(registered);
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      issue(object, c, send.ptr, recv.ptr, count);
      CUDA_OK(cudaStreamEndCapture(stream, &graph));
      EXPECT_EQ(object.captureMappings(), expectedMappings(allocationsPerPeer))
          << "every peer's allocations of the call are mapped at capture";
      CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
      for (int replay = 0; replay < 3; ++replay) {
        replayAndCheck(exec, c, count, send.ptr, recv.ptr, 300 + replay, "replay " + std::to_string(replay));
      }
      EXPECT_EQ(object.captureMappings(), expectedMappings(allocationsPerPeer)) << "replays map nothing";
      (void)cudaGraphExecDestroy(exec);
      (void)cudaGraphDestroy(graph);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's object, with its mappings of this rank's buffers, is gone
  }
};

// Sizes where Auto runs registered buffers on peers' buffers at any rank count (selection.cc): all-reduce
// from 1 MiB, reduce-scatter and all-gather from 1 MiB parts (zero-copy), broadcast from 8 MiB and all-to-all from
// 16 MiB parts (copy engines); 3 elements more, so that every kernel has a ragged tail.

TEST_F(CollectivesCaptureMpTest, CapturedAllReduceRunsOnPeersUnregisteredBuffers) {
  captureAndReplay(Collective::AllReduce, (4 << 20) / 4 + 3, 2);
}

TEST_F(CollectivesCaptureMpTest, CapturedReduceScatterRunsOnPeersUnregisteredBuffers) {
  captureAndReplay(Collective::ReduceScatter, (1 << 20) / 4 + 3, 1);
}

TEST_F(CollectivesCaptureMpTest, CapturedAllGatherRunsOnPeersUnregisteredBuffers) {
  captureAndReplay(Collective::AllGather, (1 << 20) / 4 + 3, 1);
}

TEST_F(CollectivesCaptureMpTest, CapturedBroadcastRunsOnPeersUnregisteredBuffers) {
  captureAndReplay(Collective::Broadcast, (8 << 20) / 4 + 3, 1);
}

TEST_F(CollectivesCaptureMpTest, CapturedAllToAllRunsOnPeersUnregisteredBuffers) {
  captureAndReplay(Collective::AllToAll, (16 << 20) / 4 + 3, 2);
}

// A second capture on buffers elsewhere in the same allocations maps nothing new, and both graphs keep
// their results.
TEST_F(CollectivesCaptureMpTest, ASecondCaptureOnTheSameAllocationsMapsNothingNew) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  const uint64_t count = (4 << 20) / 4 + 3, bytes = count * 4;
  constexpr size_t kShift = 4096 + 16;
  OffsetBuffer send(bytes + kShift, rank, 3), recv(bytes + kShift + kGuardBytes, rank, 4);
  ASSERT_NE(send.ptr, nullptr);
  ASSERT_NE(recv.ptr, nullptr);
  {
    Collectives object(shared().comm);
    cudaGraph_t graphs[2];
    cudaGraphExec_t execs[2];
    for (int g = 0; g < 2; ++g) {
      CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      issue(object, Collective::AllReduce, send.ptr + g * kShift, recv.ptr + g * kShift, count);
      CUDA_OK(cudaStreamEndCapture(stream, &graphs[g]));
      CUDA_OK(cudaGraphInstantiate(&execs[g], graphs[g], 0));
      EXPECT_EQ(object.captureMappings(), expectedMappings(2)) << "after capture " << g;
    }
    for (int replay = 0; replay < 2; ++replay) {
      for (int g = 0; g < 2; ++g) {
        replayAndCheck(execs[g], Collective::AllReduce, count, send.ptr + g * kShift, recv.ptr + g * kShift,
                       310 + 2 * replay + g, "graph " + std::to_string(g) + ", replay " + std::to_string(replay));
      }
    }
    for (int g = 0; g < 2; ++g) {
      (void)cudaGraphExecDestroy(execs[g]);
      (void)cudaGraphDestroy(graphs[g]);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Buffers captured, freed and allocated again (most often at the same address) between two captures:
// the owner reports the freed allocations at the second capture, every peer drops its mapping of them
// before it maps the new ones, and both captures give every result.
TEST_F(CollectivesCaptureMpTest, AFreedAndReallocatedBufferIsMappedAnewAndKeepsEveryResult) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  const uint64_t count = (4 << 20) / 4 + 3, bytes = count * 4;
  {
    Collectives object(shared().comm);
    for (int round = 0; round < 2; ++round) {
      DeviceBytes send(bytes), recv(bytes + kGuardBytes);
      ASSERT_NE(send.ptr, nullptr);
      ASSERT_NE(recv.ptr, nullptr);
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      issue(object, Collective::AllReduce, send.ptr, recv.ptr, count);
      CUDA_OK(cudaStreamEndCapture(stream, &graph));
      EXPECT_EQ(object.captureMappings(), expectedMappings(2))
          << "round " << round << ": the freed allocations' mappings went, the new ones came";
      CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
      replayAndCheck(exec, Collective::AllReduce, count, send.ptr, recv.ptr, 320 + round,
                     "round " + std::to_string(round));
      (void)cudaGraphExecDestroy(exec);
      (void)cudaGraphDestroy(graph);
      // The graph is gone and every rank finished it: the buffers are freed with peers still mapping them.
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// One allocation more than the bound: the call that would need it runs as on unregistered buffers on
// every rank (one rank alone taking another path would hang its peers), and gives every result.
TEST_F(CollectivesCaptureMpTest, BeyondTheBoundACallRunsUnregisteredOnEveryRank) {
  COLL_REQUIRE_GPU();
  COLL_REQUIRE_AUTO();
  const size_t bound = static_cast<size_t>(mscclpp::env()->collCaptureCache);
  if (bound > 1024) GTEST_SKIP() << "MSCCLPP_COLL_CAPTURE_CACHE=" << bound << " is too many allocations to fill here";
  const uint64_t count = (1 << 20) / 4 + 3, bytes = count * 4;
  std::vector<std::unique_ptr<DeviceBytes>> outputs;
  for (size_t i = 0; i <= bound; ++i) {
    outputs.push_back(std::make_unique<DeviceBytes>(bytes * nRanks + kGuardBytes));
    ASSERT_NE(outputs.back()->ptr, nullptr) << "allocation " << i;
  }
  DeviceBytes send(bytes);
  ASSERT_NE(send.ptr, nullptr);
  {
    Collectives object(shared().comm);
    // Each all-gather maps the peers' outputs, one allocation each, until the bound.
    cudaGraph_t filling;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (size_t i = 0; i < bound; ++i) issue(object, Collective::AllGather, send.ptr, outputs[i]->ptr, count);
    CUDA_OK(cudaStreamEndCapture(stream, &filling));
    (void)cudaGraphDestroy(filling);
    EXPECT_EQ(object.captureMappings(), expectedMappings(bound));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    issue(object, Collective::AllGather, send.ptr, outputs[bound]->ptr, count);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    EXPECT_EQ(object.captureMappings(), expectedMappings(bound)) << "nothing mapped beyond the bound";
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    replayAndCheck(exec, Collective::AllGather, count, send.ptr, outputs[bound]->ptr, 330, "beyond the bound");
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
