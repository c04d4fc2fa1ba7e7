// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The NCCL API on the GPU, one process per rank (mpirun): every collective against a host reference,
// split into halves, grouped send/recv in any order, PreMulSum, registered buffers, abort while peers
// wait, and hostile arguments (overflowing counts, frees of what ncclMemAlloc did not return).

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "mp_unit/mp_test.hpp"
#include "overflow_cases.hpp"

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call
#define NCCL_OK(call) ASSERT_EQ((call), ncclSuccess) << #call << ": " << ncclGetLastError(nullptr)

class NcclMpTest : public mscclpp::test::MultiProcessTest {
 protected:
  void SetUp() override {
    MultiProcessTest::SetUp();
    int nGpus = 0;
    bool noGpu = cudaGetDeviceCount(&nGpus) != cudaSuccess || nGpus == 0;
    if (anyRank(noGpu)) GTEST_SKIP() << "needs a GPU";
    CUDA_OK(cudaSetDevice(rank % nGpus));
    CUDA_OK(cudaStreamCreate(&stream));
    comm = makeComm(MPI_COMM_WORLD);
  }
  void TearDown() override {
    if (comm != nullptr) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  ncclComm_t makeComm(MPI_Comm mpi) {
    int r = 0, n = 0;
    MPI_Comm_rank(mpi, &r);
    MPI_Comm_size(mpi, &n);
    ncclUniqueId id;
    if (r == 0) EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpi);
    ncclComm_t c = nullptr;
    EXPECT_EQ(ncclCommInitRank(&c, n, id, r), ncclSuccess) << ncclGetLastError(nullptr);
    return c;
  }

  template <class T>
  T* upload(const std::vector<T>& host) {
    T* dev = nullptr;
    EXPECT_EQ(cudaMalloc(&dev, std::max<size_t>(1, host.size()) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    buffers.push_back(dev);
    return dev;
  }
  template <class T>
  std::vector<T> download(const T* dev, size_t n) {
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  ~NcclMpTest() override {
    for (void* b : buffers) cudaFree(b);
  }

  /// Rank r's element i: distinct per rank and element, exact in float.
  static float value(int r, size_t i) { return static_cast<float>((r + 1) * 1000 + i % 997); }
  std::vector<float> input(int r, size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = value(r, i);
    return v;
  }

  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<void*> buffers;
};

const size_t kCounts[] = {1, 1000, 262144, 4 * 1024 * 1024 + 3};

TEST_F(NcclMpTest, AllReduceMatchesHostReferenceForEveryOp) {
  for (size_t count : kCounts) {
    for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg}) {
      std::vector<float> mine = input(rank, count);
      if (op == ncclProd) std::fill(mine.begin(), mine.end(), static_cast<float>(rank + 2));
      float* send = upload(mine);
      float* recv = upload(std::vector<float>(count, -1.f));
      NCCL_OK(ncclAllReduce(send, recv, count, ncclFloat32, op, comm, stream));
      std::vector<float> got = download(recv, count);
      for (size_t i = 0; i < count; i += 1 + count / 257) {
        float expect = op == ncclProd ? 1.f : (op == ncclMax ? -1e30f : (op == ncclMin ? 1e30f : 0.f));
        for (int r = 0; r < nRanks; ++r) {
          float x = op == ncclProd ? static_cast<float>(r + 2) : value(r, i);
          if (op == ncclSum || op == ncclAvg) expect += x;
          if (op == ncclProd) expect *= x;
          if (op == ncclMax) expect = std::max(expect, x);
          if (op == ncclMin) expect = std::min(expect, x);
        }
        if (op == ncclAvg) expect /= nRanks;
        ASSERT_NEAR(got[i], expect, 1e-3f * std::abs(expect)) << "count " << count << " op " << op << " i " << i;
      }
    }
  }
}

TEST_F(NcclMpTest, AllReduceInt32InPlace) {
  const size_t count = 100000;
  std::vector<int32_t> mine(count);
  for (size_t i = 0; i < count; ++i) mine[i] = static_cast<int32_t>(rank * 7 + i);
  int32_t* buf = upload(mine);
  NCCL_OK(ncclAllReduce(buf, buf, count, ncclInt32, ncclSum, comm, stream));
  std::vector<int32_t> got = download(buf, count);
  for (size_t i = 0; i < count; ++i) {
    int32_t expect = 0;
    for (int r = 0; r < nRanks; ++r) expect += static_cast<int32_t>(r * 7 + i);
    ASSERT_EQ(got[i], expect) << i;
  }
}

TEST_F(NcclMpTest, AllGatherMatchesHostReference) {
  for (size_t count : kCounts) {
    float* send = upload(input(rank, count));
    float* recv = upload(std::vector<float>(count * nRanks, -1.f));
    NCCL_OK(ncclAllGather(send, recv, count, ncclFloat32, comm, stream));
    std::vector<float> got = download(recv, count * nRanks);
    for (int r = 0; r < nRanks; ++r) {
      for (size_t i = 0; i < count; i += 1 + count / 257) ASSERT_EQ(got[r * count + i], value(r, i)) << count;
    }
  }
}

TEST_F(NcclMpTest, ReduceScatterMatchesHostReference) {
  for (size_t count : kCounts) {
    float* send = upload(input(rank, count * nRanks));
    float* recv = upload(std::vector<float>(count, -1.f));
    NCCL_OK(ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, comm, stream));
    std::vector<float> got = download(recv, count);
    for (size_t i = 0; i < count; i += 1 + count / 257) {
      float expect = 0;
      for (int r = 0; r < nRanks; ++r) expect += value(r, rank * count + i);
      ASSERT_NEAR(got[i], expect, 1e-3f * expect) << count;
    }
  }
}

TEST_F(NcclMpTest, BroadcastAndReduceFromEveryRoot) {
  const size_t count = 65537;
  for (int root = 0; root < nRanks; ++root) {
    float* send = upload(input(rank, count));
    float* recv = upload(std::vector<float>(count, -1.f));
    NCCL_OK(ncclBroadcast(send, recv, count, ncclFloat32, root, comm, stream));
    std::vector<float> got = download(recv, count);
    for (size_t i = 0; i < count; i += 97) ASSERT_EQ(got[i], value(root, i)) << "root " << root;
    float* red = upload(std::vector<float>(count, -1.f));
    NCCL_OK(ncclReduce(send, red, count, ncclFloat32, ncclMax, root, comm, stream));
    got = download(red, count);
    if (rank == root) {
      for (size_t i = 0; i < count; i += 97) ASSERT_EQ(got[i], value(nRanks - 1, i)) << "root " << root;
    }
  }
}

TEST_F(NcclMpTest, AllToAllGatherScatterMatchHostReference) {
  const size_t count = 4099;
  std::vector<float> mine(count * nRanks);
  for (int p = 0; p < nRanks; ++p) {
    for (size_t i = 0; i < count; ++i) mine[p * count + i] = value(rank, p * 10000 + i);
  }
  float* send = upload(mine);
  float* recv = upload(std::vector<float>(count * nRanks, -1.f));
  NCCL_OK(ncclAlltoAll(send, recv, count, ncclFloat32, comm, stream));
  std::vector<float> got = download(recv, count * nRanks);
  for (int r = 0; r < nRanks; ++r) {
    for (size_t i = 0; i < count; i += 31) ASSERT_EQ(got[r * count + i], value(r, rank * 10000 + i));
  }
  const int root = nRanks - 1;
  float* gathered = upload(std::vector<float>(count * nRanks, -1.f));
  NCCL_OK(ncclGather(send, gathered, count, ncclFloat32, root, comm, stream));
  got = download(gathered, count * nRanks);
  if (rank == root) {
    for (int r = 0; r < nRanks; ++r) {
      for (size_t i = 0; i < count; i += 31) ASSERT_EQ(got[r * count + i], value(r, i));
    }
  }
  float* scattered = upload(std::vector<float>(count, -1.f));
  NCCL_OK(ncclScatter(send, scattered, count, ncclFloat32, root, comm, stream));
  got = download(scattered, count);
  for (size_t i = 0; i < count; i += 31) ASSERT_EQ(got[i], value(root, rank * 10000 + i));
}

TEST_F(NcclMpTest, GroupedSendRecvRingInEitherOrder) {
  const size_t count = 300001;
  const int next = (rank + 1) % nRanks, prev = (rank + nRanks - 1) % nRanks;
  for (bool recvFirst : {false, true}) {
    float* send = upload(input(rank, count));
    float* recv = upload(std::vector<float>(count, -1.f));
    NCCL_OK(ncclGroupStart());
    if (recvFirst) NCCL_OK(ncclRecv(recv, count, ncclFloat32, prev, comm, stream));
    NCCL_OK(ncclSend(send, count, ncclFloat32, next, comm, stream));
    if (!recvFirst) NCCL_OK(ncclRecv(recv, count, ncclFloat32, prev, comm, stream));
    NCCL_OK(ncclGroupEnd());
    std::vector<float> got = download(recv, count);
    for (size_t i = 0; i < count; i += 101) ASSERT_EQ(got[i], value(prev, i));
  }
}

TEST_F(NcclMpTest, SendToItselfWithoutRecvInAGroupIsAnError) {
  float* send = upload(input(rank, 16));
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclSend(send, 16, ncclFloat32, rank, comm, stream));
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_NE(std::string(ncclGetLastError(comm)).find("do not pair up"), std::string::npos) << ncclGetLastError(comm);
}

TEST_F(NcclMpTest, BadArgumentsOnALiveComm) {
  float* buf = upload(input(rank, 16));
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, static_cast<ncclDataType_t>(42), ncclSum, comm, stream), ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, ncclFloat32, static_cast<ncclRedOp_t>(77), comm, stream), ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(buf, buf, 16, ncclFloat32, nRanks, comm, stream), ncclInvalidArgument);
  EXPECT_EQ(ncclSend(buf, 16, ncclFloat32, -1, comm, stream), ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
  int value = -1;
  NCCL_OK(ncclCommCount(comm, &value));
  EXPECT_EQ(value, nRanks);
  NCCL_OK(ncclCommUserRank(comm, &value));
  EXPECT_EQ(value, rank);
}

TEST_F(NcclMpTest, PreMulSumScalesEachInput) {
  const size_t count = 5000;
  float scalar = 0.5f;
  ncclRedOp_t op;
  NCCL_OK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  float* send = upload(input(rank, count));
  float* recv = upload(std::vector<float>(count, -1.f));
  EXPECT_EQ(ncclAllReduce(send, recv, count, ncclFloat16, op, comm, stream), ncclInvalidArgument);
  NCCL_OK(ncclAllReduce(send, recv, count, ncclFloat32, op, comm, stream));
  std::vector<float> got = download(recv, count);
  for (size_t i = 0; i < count; i += 13) {
    float expect = 0;
    for (int r = 0; r < nRanks; ++r) expect += 0.5f * value(r, i);
    ASSERT_NEAR(got[i], expect, 1e-3f * expect);
  }
  NCCL_OK(ncclRedOpDestroy(op, comm));
  EXPECT_EQ(ncclRedOpDestroy(op, comm), ncclInvalidUsage);
}

// nccl-tests gives every rank a scalar of its own: each rank's input is scaled by that rank's scalar
// before the sum. Host-immediate and device scalars; 5000 elements take the LL path, 2^20 the staged one
// (reduce is always staged). Values are integers below 5000 and scalars halves, so every product and sum
// is exact in float and the results are compared exactly.
TEST_F(NcclMpTest, PreMulSumScalesEachInputByItsOwnRanksScalar) {
  auto scalarOf = [](int r) { return 0.5f * static_cast<float>(r + 1); };
  auto expected = [&](size_t i) {
    float sum = 0;
    for (int r = 0; r < nRanks; ++r) sum += scalarOf(r) * value(r, i);
    return sum;
  };
  auto countWrong = [&](const std::vector<float>& got, size_t offset) {
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != expected(offset + i) ? 1 : 0;
    return wrong;
  };
  float hostScalar = scalarOf(rank);
  float* deviceScalar = upload(std::vector<float>{hostScalar});
  const int root = nRanks - 1;
  for (ncclScalarResidence_t residence : {ncclScalarHostImmediate, ncclScalarDevice}) {
    const char* where = residence == ncclScalarDevice ? "device scalar" : "host scalar";
    ncclRedOp_t op;
    void* scalar = residence == ncclScalarDevice ? static_cast<void*>(deviceScalar) : static_cast<void*>(&hostScalar);
    NCCL_OK(ncclRedOpCreatePreMulSum(&op, scalar, ncclFloat32, residence, comm));
    for (size_t count : {size_t{5000}, size_t{1} << 20}) {
      float* send = upload(input(rank, count * nRanks));
      float* recv = upload(std::vector<float>(count, -1.f));
      NCCL_OK(ncclAllReduce(send, recv, count, ncclFloat32, op, comm, stream));
      EXPECT_EQ(countWrong(download(recv, count), 0), 0u) << "allreduce, " << where << ", count " << count;
      NCCL_OK(ncclReduceScatter(send, recv, count, ncclFloat32, op, comm, stream));
      EXPECT_EQ(countWrong(download(recv, count), rank * count), 0u)
          << "reducescatter, " << where << ", count " << count;
      NCCL_OK(ncclReduce(send, recv, count, ncclFloat32, op, root, comm, stream));
      if (rank == root) {
        EXPECT_EQ(countWrong(download(recv, count), 0), 0u) << "reduce, " << where << ", count " << count;
      }
    }
    NCCL_OK(ncclRedOpDestroy(op, comm));
  }
  CUDA_OK(cudaStreamSynchronize(stream));
}

TEST_F(NcclMpTest, SplitIntoHalvesRunsCollectivesOnEach) {
  if (nRanks < 2) GTEST_SKIP() << "needs 2 ranks";
  const int color = rank < nRanks / 2 ? 0 : 1;
  ncclComm_t half = nullptr;
  NCCL_OK(ncclCommSplit(comm, color, rank, &half, nullptr));
  ASSERT_NE(half, nullptr);
  int n = 0, r = -1;
  NCCL_OK(ncclCommCount(half, &n));
  NCCL_OK(ncclCommUserRank(half, &r));
  const int first = color == 0 ? 0 : nRanks / 2;
  EXPECT_EQ(n, color == 0 ? nRanks / 2 : nRanks - nRanks / 2);
  EXPECT_EQ(r, rank - first);
  const size_t count = 10000;
  float* send = upload(input(rank, count));
  float* recv = upload(std::vector<float>(count, -1.f));
  NCCL_OK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, half, stream));
  std::vector<float> got = download(recv, count);
  for (size_t i = 0; i < count; i += 7) {
    float expect = 0;
    for (int p = first; p < first + n; ++p) expect += value(p, i);
    ASSERT_EQ(got[i], expect);
  }
  NCCL_OK(ncclCommDestroy(half));
  ncclComm_t none = reinterpret_cast<ncclComm_t>(1);
  NCCL_OK(ncclCommSplit(comm, rank == 0 ? NCCL_SPLIT_NOCOLOR : 0, rank, &none, nullptr));
  if (rank == 0) EXPECT_EQ(none, nullptr);
  if (rank != 0 && none != nullptr) NCCL_OK(ncclCommDestroy(none));
}

/// Runs `call` while `stream` is captured into a graph; returns its result, and in `nodes` the number
/// of operations it enqueued.
ncclResult_t runCaptured(cudaStream_t stream, const std::function<ncclResult_t()>& call, size_t& nodes) {
  nodes = SIZE_MAX;
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const ncclResult_t res = call();
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  if (graph != nullptr) {
    EXPECT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
    cudaGraphDestroy(graph);
  }
  return res;
}

TEST_F(NcclMpTest, OverflowingCountsAreInvalidArgumentAndLaunchNothing) {
  float* buf = upload(input(rank, 1024));
  // This communicator of every rank, and one of this rank alone.
  ncclComm_t alone = makeComm(MPI_COMM_SELF);
  ASSERT_NE(alone, nullptr);
  for (ncclComm_t c : {comm, alone}) {
    int n = 0, r = 0;
    NCCL_OK(ncclCommCount(c, &n));
    NCCL_OK(ncclCommUserRank(c, &r));
    for (const mscclpp::test::OverflowCase& oc : mscclpp::test::overflowCases(r, n, buf)) {
      size_t nodes = 0;
      EXPECT_EQ(runCaptured(
                    stream, [&]() { return oc.run(c, stream); }, nodes),
                ncclInvalidArgument)
          << oc.call << " count " << oc.count << " on " << n << " ranks";
      EXPECT_EQ(nodes, 0u) << oc.call << " enqueued work on " << n << " ranks";
      const std::string last = ncclGetLastError(c);
      EXPECT_EQ(last.rfind(oc.call + ": ", 0), 0u) << last;
      EXPECT_NE(last.find("bytes a buffer of one call may hold"), std::string::npos) << last;
    }
  }
  // Both communicators still work.
  float* out = upload(std::vector<float>(1024, -1.f));
  NCCL_OK(ncclAllReduce(buf, out, 1024, ncclFloat32, ncclSum, alone, stream));
  std::vector<float> got = download(out, 1024);
  for (size_t i = 0; i < 1024; i += 101) ASSERT_EQ(got[i], value(rank, i));
  NCCL_OK(ncclAllReduce(buf, out, 1024, ncclFloat32, ncclMax, comm, stream));
  got = download(out, 1024);
  for (size_t i = 0; i < 1024; i += 101) ASSERT_EQ(got[i], value(nRanks - 1, i));
  NCCL_OK(ncclCommDestroy(alone));
}

TEST_F(NcclMpTest, MemFreeOfAnInteriorPointerIsRefusedAndTheAllocationStaysUsable) {
  const size_t bytes = 4 << 20;
  void* p = nullptr;
  NCCL_OK(ncclMemAlloc(&p, bytes));
  char* base = static_cast<char*>(p);
  EXPECT_EQ(ncclMemFree(base + 4096), ncclInvalidArgument);
  const std::string last = ncclGetLastError(nullptr);
  EXPECT_EQ(last.rfind("ncclMemFree: ", 0), 0u) << last;
  EXPECT_NE(last.find("inside the allocation"), std::string::npos) << last;
  // Still mapped, whole: write it all and read it back.
  CUDA_OK(cudaMemset(base, 0x5a, bytes));
  std::vector<unsigned char> host(bytes);
  CUDA_OK(cudaMemcpy(host.data(), base, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(host[i], 0x5a) << i;
  NCCL_OK(ncclMemFree(p));
  EXPECT_EQ(ncclMemFree(p), ncclInvalidArgument);
}

TEST_F(NcclMpTest, RegisteredBuffersRunCollectivesAndDeregisterOnce) {
  const size_t count = 1 << 20;
  void* send = nullptr;
  void* recv = nullptr;
  NCCL_OK(ncclMemAlloc(&send, count * nRanks * sizeof(float)));
  NCCL_OK(ncclMemAlloc(&recv, count * nRanks * sizeof(float)));
  std::vector<float> mine = input(rank, count);
  CUDA_OK(cudaMemcpy(send, mine.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  // ncclCommRegister (nccl-tests -R 1) on the send buffer, a symmetric window (-R 2) on the receive one.
  void* handle = nullptr;
  ncclWindow_t win = nullptr;
  NCCL_OK(ncclCommRegister(comm, send, count * nRanks * sizeof(float), &handle));
  NCCL_OK(ncclCommWindowRegister(comm, recv, count * nRanks * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC));
  NCCL_OK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream));
  std::vector<float> got = download(static_cast<float*>(recv), count);
  for (size_t i = 0; i < count; i += 1009) {
    float expect = 0;
    for (int r = 0; r < nRanks; ++r) expect += value(r, i);
    ASSERT_EQ(got[i], expect) << i;
  }
  NCCL_OK(ncclAllGather(send, recv, count, ncclFloat32, comm, stream));
  got = download(static_cast<float*>(recv), count * nRanks);
  for (int r = 0; r < nRanks; ++r) {
    for (size_t i = 0; i < count; i += 1009) ASSERT_EQ(got[r * count + i], value(r, i)) << r;
  }
  NCCL_OK(ncclCommWindowDeregister(comm, win));
  NCCL_OK(ncclCommDeregister(comm, handle));
  EXPECT_EQ(ncclCommWindowDeregister(comm, win), ncclInvalidUsage);
  EXPECT_EQ(ncclCommDeregister(comm, handle), ncclInvalidUsage);
  EXPECT_EQ(ncclCommDeregister(comm, send), ncclInvalidUsage);
  NCCL_OK(ncclMemFree(send));
  NCCL_OK(ncclMemFree(recv));
}

// Both buffers as symmetric windows (nccl-tests -R 2), from ncclMemAlloc and from cudaMalloc: the
// window registration maps them on every rank, and all-reduce, all-gather and reduce-scatter above the
// LL sizes, which Auto runs zero-copy on such buffers, give every result.
TEST_F(NcclMpTest, WindowsOnBothBuffersRunCollectives) {
  const size_t count = (1 << 20) + 5;
  const size_t bytes = count * nRanks * sizeof(float);
  for (bool fromNccl : {true, false}) {
    void* send = nullptr;
    void* recv = nullptr;
    if (fromNccl) {
      NCCL_OK(ncclMemAlloc(&send, bytes));
      NCCL_OK(ncclMemAlloc(&recv, bytes));
    } else {
      CUDA_OK(cudaMalloc(&send, bytes));
      CUDA_OK(cudaMalloc(&recv, bytes));
    }
    std::vector<float> mine = input(rank, count * nRanks);
    CUDA_OK(cudaMemcpy(send, mine.data(), bytes, cudaMemcpyHostToDevice));
    ncclWindow_t sendWin = nullptr, recvWin = nullptr;
    NCCL_OK(ncclCommWindowRegister(comm, send, bytes, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
    NCCL_OK(ncclCommWindowRegister(comm, recv, bytes, &recvWin, NCCL_WIN_COLL_SYMMETRIC));

    NCCL_OK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream));
    std::vector<float> got = download(static_cast<float*>(recv), count);
    for (size_t i = 0; i < count; ++i) {
      float expect = 0;
      for (int r = 0; r < nRanks; ++r) expect += value(r, i);
      ASSERT_EQ(got[i], expect) << "all-reduce element " << i << (fromNccl ? ", ncclMemAlloc" : ", cudaMalloc");
    }
    NCCL_OK(ncclReduceScatter(send, recv, count, ncclFloat32, ncclMax, comm, stream));
    got = download(static_cast<float*>(recv), count);
    for (size_t i = 0; i < count; ++i) {
      float expect = value(0, rank * count + i);
      for (int r = 1; r < nRanks; ++r) expect = std::max(expect, value(r, rank * count + i));
      ASSERT_EQ(got[i], expect) << "reduce-scatter element " << i;
    }
    NCCL_OK(ncclAllGather(send, recv, count, ncclFloat32, comm, stream));
    got = download(static_cast<float*>(recv), count * nRanks);
    for (int r = 0; r < nRanks; ++r) {
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[r * count + i], value(r, i)) << "all-gather from " << r;
    }
    NCCL_OK(ncclCommWindowDeregister(comm, sendWin));
    NCCL_OK(ncclCommWindowDeregister(comm, recvWin));
    if (fromNccl) {
      NCCL_OK(ncclMemFree(send));
      NCCL_OK(ncclMemFree(recv));
    } else {
      CUDA_OK(cudaFree(send));
      CUDA_OK(cudaFree(recv));
    }
  }
}

TEST_F(NcclMpTest, AbortReturnsWhilePeersNeverJoinTheCollective) {
  if (nRanks < 2) GTEST_SKIP() << "needs 2 ranks";
  if (std::getenv("MSCCLPP_NCCL_TEST_ABORT_IN_KERNEL") == nullptr) {
    GTEST_SKIP() << "a kernel waiting for a peer cannot be stopped until the collectives can be aborted; "
                    "set MSCCLPP_NCCL_TEST_ABORT_IN_KERNEL=1 to run it";
  }
  // Rank 0 enters an all-reduce the others never call, then aborts; it must come back, not hang.
  ncclComm_t victim = makeComm(MPI_COMM_WORLD);
  ASSERT_NE(victim, nullptr);
  if (rank == 0) {
    const size_t count = 1 << 20;
    float* buf = upload(input(rank, count));
    NCCL_OK(ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, victim, stream));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ncclCommAbort(victim), ncclSuccess);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) EXPECT_EQ(ncclCommAbort(victim), ncclSuccess);
}

}  // namespace
