// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The executor on real processes: every plan of test/executor-plans written for this many ranks runs
// at several sizes, element types and packet types; each result is compared with a host reference,
// over repeated executions with changing inputs, back-to-back executions, and replays of a CUDA graph.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mscclpp/executor.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/gpu_test.hpp"
#include "ext/common/element_types.hpp"
#include "mp_unit/data_plane_util.hpp"

using namespace mscclpp;
using namespace mscclpp::test;

namespace {

const std::string kPlanDir = MSCCLPP_TEST_PLAN_DIR;

using ext::elementSize;

/// Small integers, so that every sum of up to 4 ranks is exact in every type (e5m2: at most 4).
int valueAt(DataType t, int rank, uint64_t index, int round) {
  const int span = t == DataType::FP8_E5M2 ? 2 : 4;
  return static_cast<int>((index * 7 + rank * 3 + round * 5 + index / 97) % span);
}

void encode(DataType t, int v, char* out) {
  switch (t) {
    case DataType::INT32: {
      int32_t x = v;
      std::memcpy(out, &x, 4);
      break;
    }
    case DataType::UINT32: {
      uint32_t x = static_cast<uint32_t>(v);
      std::memcpy(out, &x, 4);
      break;
    }
    case DataType::FLOAT32: {
      float x = static_cast<float>(v);
      std::memcpy(out, &x, 4);
      break;
    }
    case DataType::FLOAT16: {
      __half x = __float2half(static_cast<float>(v));
      std::memcpy(out, &x, 2);
      break;
    }
    case DataType::BFLOAT16: {
      __nv_bfloat16 x = __float2bfloat16(static_cast<float>(v));
      std::memcpy(out, &x, 2);
      break;
    }
    case DataType::FP8_E4M3: {
      __nv_fp8_e4m3 x(static_cast<float>(v));
      std::memcpy(out, &x, 1);
      break;
    }
    case DataType::FP8_E5M2: {
      __nv_fp8_e5m2 x(static_cast<float>(v));
      std::memcpy(out, &x, 1);
      break;
    }
  }
}

/// The bytes of `count` elements of rank `rank`'s input in round `round`.
std::vector<char> inputOf(DataType t, int rank, uint64_t count, int round) {
  const size_t es = elementSize(t);
  std::vector<char> bytes(count * es);
  for (uint64_t i = 0; i < count; ++i) encode(t, valueAt(t, rank, i, round), &bytes[i * es]);
  return bytes;
}

/// What this rank's output must hold: inputs of `inputBytes` each, output of `outputBytes`.
std::vector<char> expectedOutput(const std::string& collective, DataType t, int rank, int nRanks, uint64_t inputBytes,
                                 uint64_t outputBytes, int round) {
  const size_t es = elementSize(t);
  std::vector<char> out(outputBytes);
  auto sumAt = [&](uint64_t index) {
    int s = 0;
    for (int r = 0; r < nRanks; ++r) s += valueAt(t, r, index, round);
    return s;
  };
  if (collective == "allreduce") {
    for (uint64_t i = 0; i < outputBytes / es; ++i) encode(t, sumAt(i), &out[i * es]);
  } else if (collective == "allgather") {
    for (int r = 0; r < nRanks; ++r) {
      for (uint64_t i = 0; i < inputBytes / es; ++i) encode(t, valueAt(t, r, i, round), &out[r * inputBytes + i * es]);
    }
  } else {  // reducescatter: this rank's slice of the sum
    const uint64_t first = rank * (outputBytes / es);
    for (uint64_t i = 0; i < outputBytes / es; ++i) encode(t, sumAt(first + i), &out[i * es]);
  }
  return out;
}

struct PlanInfo {
  std::string collective;
  bool inplace;
  bool ll;
  uint32_t inputChunks;
  uint32_t outputChunks;
};

PlanInfo readInfo(const std::string& path, int rank) {
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f);
  const auto& g = j["gpus"][rank];
  return {j["collective"], j["inplace"], j["protocol"] == "LL", g["input_chunks"], g["output_chunks"]};
}

std::vector<std::string> planBases() {
  std::vector<std::string> bases;
  for (const auto& entry : std::filesystem::directory_iterator(kPlanDir)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = "_2ranks.json";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      bases.push_back(name.substr(0, name.size() - suffix.size()));
    }
  }
  std::sort(bases.begin(), bases.end());
  return bases;
}

class ExecutorMpTest : public DataPlaneMpTest, public ::testing::WithParamInterface<std::string> {
 protected:
  struct Case {
    uint64_t chunkBytes;
    DataType type;
    PacketType packet;
  };

  /// Runs `c` for `rounds` rounds with new inputs, then `backToBack` executions without host sync, then
  /// (if `graph`) replays of a captured execution; returns the number of wrong bytes seen.
  void runCase(Executor& executor, const ExecutionPlan& plan, const PlanInfo& info, const Case& c, bool graph) {
    const uint64_t in = c.chunkBytes * info.inputChunks;
    const uint64_t out = info.inplace ? in : c.chunkBytes * info.outputChunks;
    DeviceMemory& inBuf = allocate(in);
    DeviceMemory& outBuf = info.inplace ? inBuf : allocate(out);
    TestStream stream;
    const std::string what = std::string(GetParam()) + " " + ext::elementName(c.type) + " chunk " +
                             std::to_string(c.chunkBytes) + (c.packet == PacketType::LL8 ? " LL8" : " LL16");
    const uint64_t count = in / elementSize(c.type);
    auto check = [&](int round, const char* when) {
      std::vector<char> got(out);
      cudaCheck(cudaMemcpy(got.data(), outBuf.get(), out, cudaMemcpyDeviceToHost), "reading the output");
      const auto want = expectedOutput(info.collective, c.type, rank, nRanks, in, out, round);
      uint64_t wrong = 0, first = UINT64_MAX;
      for (uint64_t i = 0; i < out; ++i) {
        if (got[i] != want[i]) {
          ++wrong;
          first = std::min(first, i);
        }
      }
      EXPECT_EQ(wrong, 0u) << what << ", " << when << " round " << round << ": first wrong byte at " << first << " of "
                           << out;
    };
    auto setInput = [&](int round) {
      const auto bytes = inputOf(c.type, rank, count, round);
      // On the execution's stream: a plain cudaMemcpy runs on the legacy stream, which a non-blocking
      // stream does not wait for, and a pageable copy may return before the data is on the GPU.
      cudaCheck(cudaMemcpyAsync(inBuf.get(), bytes.data(), in, cudaMemcpyHostToDevice, stream), "writing the input");
      cudaCheck(cudaStreamSynchronize(stream), "waiting for the input");
    };
    auto execute = [&] { executor.execute(rank, inBuf.get(), outBuf.get(), in, out, c.type, plan, stream, c.packet); };
    for (int round = 0; round < 3; ++round) {
      setInput(round);
      MPI_Barrier(MPI_COMM_WORLD);
      execute();
      finish(stream, what);
      check(round, "execution");
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!info.inplace) {
      // Executions queued back to back: packets and scratch halves of consecutive rounds must not mix.
      setInput(7);
      MPI_Barrier(MPI_COMM_WORLD);
      for (int i = 0; i < 8; ++i) execute();
      finish(stream, what);
      check(7, "back-to-back");
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!graph) return;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaCheck(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    execute();
    cudaCheck(cudaStreamEndCapture(stream, &g), "cudaStreamEndCapture");
    cudaCheck(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
    for (int round = 10; round < 13; ++round) {
      setInput(round);
      MPI_Barrier(MPI_COMM_WORLD);
      cudaCheck(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
      finish(stream, what + " (graph)");
      check(round, "graph replay");
      MPI_Barrier(MPI_COMM_WORLD);
    }
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(g);
  }
};

TEST_P(ExecutorMpTest, ResultsMatchTheHostReference) {
  MSCCLPP_REQUIRE_GPU();
  if (!selectGpu()) GTEST_SKIP() << "a rank has no usable GPU";
  const std::string path = kPlanDir + "/" + GetParam() + "_" + std::to_string(nRanks) + "ranks.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no plan for " << nRanks << " ranks: " << path;
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    auto comm = std::make_shared<Communicator>(bootstrap);
    const PlanInfo info = readInfo(path, rank);
    ExecutionPlan plan(path, rank);
    {
      Executor executor(comm);
      const std::vector<PacketType> packets = info.ll ? std::vector<PacketType>{PacketType::LL16, PacketType::LL8}
                                                      : std::vector<PacketType>{PacketType::LL16};
      // Tiny, odd-sized and large chunks in fp32 (the odd one also with a CUDA graph), every other type at
      // one size: each type and packet type runs its own kernel.
      for (PacketType pt : packets) {
        for (uint64_t chunk : {64ull, 4096ull + 48, 1ull << 20}) {
          runCase(executor, plan, info, {chunk, DataType::FLOAT32, pt}, chunk == 4096 + 48);
        }
        for (DataType t : {DataType::INT32, DataType::UINT32, DataType::FLOAT16, DataType::BFLOAT16, DataType::FP8_E4M3,
                           DataType::FP8_E5M2}) {
          runCase(executor, plan, info, {2048, t, pt}, false);
        }
      }
      cudaCheck(cudaDeviceSynchronize(), "the last executions");
      MPI_Barrier(MPI_COMM_WORLD);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Plans, ExecutorMpTest, ::testing::ValuesIn(planBases()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST_F(DataPlaneMpTest, ExecutorRunsABlockWhoseTableExceedsTheDefaultSharedMemory) {
  MSCCLPP_REQUIRE_GPU();
  if (!selectGpu()) GTEST_SKIP() << "a rank has no usable GPU";
  const std::string path = kPlanDir + "/allreduce_oneshot_" + std::to_string(nRanks) + "ranks.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no plan for " << nRanks << " ranks";
  // 1100 nops ahead of thread block 0's ops: its table (48 bytes an op) passes the 48 KiB a kernel gets
  // without raising its limit.
  nlohmann::json j;
  {
    std::ifstream f(path);
    j = nlohmann::json::parse(f);
  }
  for (auto& gpu : j["gpus"]) {
    auto& ops = gpu["threadblocks"][0]["ops"];
    nlohmann::json longer = nlohmann::json::array();
    for (int i = 0; i < 1100; ++i) longer.push_back({{"name", "nop"}});
    for (auto& op : ops) longer.push_back(op);
    ops = longer;
  }
  const std::string longPath = std::filesystem::temp_directory_path().string() + "/executor_long_block_" +
                               std::to_string(getpid()) + "_" + std::to_string(rank) + ".json";
  {
    std::ofstream f(longPath);
    f << j.dump();
  }
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    auto comm = std::make_shared<Communicator>(bootstrap);
    const PlanInfo info = readInfo(longPath, rank);
    ExecutionPlan plan(longPath, rank);
    Executor executor(comm);
    const uint64_t in = 4096 * info.inputChunks;
    const uint64_t out = info.inplace ? in : 4096 * info.outputChunks;
    DeviceMemory& inBuf = allocate(in);
    DeviceMemory& outBuf = info.inplace ? inBuf : allocate(out);
    TestStream stream;
    const auto bytes = inputOf(DataType::FLOAT32, rank, in / 4, 0);
    cudaCheck(cudaMemcpyAsync(inBuf.get(), bytes.data(), in, cudaMemcpyHostToDevice, stream), "writing the input");
    cudaCheck(cudaStreamSynchronize(stream), "waiting for the input");
    MPI_Barrier(MPI_COMM_WORLD);
    executor.execute(rank, inBuf.get(), outBuf.get(), in, out, DataType::FLOAT32, plan, stream);
    finish(stream, "the plan with a long thread block");
    std::vector<char> got(out);
    cudaCheck(cudaMemcpy(got.data(), outBuf.get(), out, cudaMemcpyDeviceToHost), "reading the output");
    EXPECT_TRUE(got == expectedOutput(info.collective, DataType::FLOAT32, rank, nRanks, in, out, 0));
    cudaCheck(cudaDeviceSynchronize(), "the execution");
    MPI_Barrier(MPI_COMM_WORLD);
  });
  std::filesystem::remove(longPath);
}

TEST_F(DataPlaneMpTest, ExecutorRefusesBadArguments) {
  MSCCLPP_REQUIRE_GPU();
  if (!selectGpu()) GTEST_SKIP() << "a rank has no usable GPU";
  const std::string path = kPlanDir + "/allreduce_oneshot_" + std::to_string(nRanks) + "ranks.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no plan for " << nRanks << " ranks";
  runPairTest([&](std::shared_ptr<TcpBootstrap> bootstrap) {
    auto comm = std::make_shared<Communicator>(bootstrap);
    ExecutionPlan plan(path, rank);
    Executor executor(comm);
    DeviceMemory& buf = allocate(4096);
    auto expectExecutorError = [&](const std::function<void()>& fn, const char* what) {
      try {
        fn();
        ADD_FAILURE() << what << ": no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.getErrorCode(), ErrorCode::ExecutorError) << what << ": " << e.what();
      }
    };
    // Refused before any setup, on every rank alike, so no rank waits for another.
    expectExecutorError(
        [&] {
          executor.execute((rank + 1) % nRanks, buf.get(), buf.get() + 2048, 2048, 2048, DataType::FLOAT32, plan,
                           nullptr);
        },
        "another rank");
    expectExecutorError(
        [&] { executor.execute(rank, buf.get(), buf.get() + 2048, 1000, 1000, DataType::FLOAT32, plan, nullptr); },
        "an unaligned size");
    expectExecutorError(
        [&] { executor.execute(rank, buf.get() + 2, buf.get() + 2048, 1024, 1024, DataType::FLOAT32, plan, nullptr); },
        "an unaligned buffer");
    expectExecutorError(
        [&] { executor.execute(rank, nullptr, buf.get(), 1024, 1024, DataType::FLOAT32, plan, nullptr); },
        "a null buffer");
    MPI_Barrier(MPI_COMM_WORLD);
  });
}

}  // namespace
