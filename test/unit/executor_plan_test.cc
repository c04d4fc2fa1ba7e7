// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The plan parser and size resolution (no GPU): every plan in test/executor-plans reads and resolves
// for every rank it is written for; every kind of malformed plan, and every path that holds no plan
// file, is refused with Error(ExecutorError) naming the file, the rank, the thread block and operation,
// and what is wrong; a plan for more ranks than the communicator has is refused before any setup.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mscclpp/executor.hpp>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "common/thread_bootstrap.hpp"
#include "ext/executor/op_vocabulary.hpp"
#include "ext/executor/plan.hpp"

using namespace mscclpp;
using json = nlohmann::json;

namespace {

const std::string kPlanDir = MSCCLPP_TEST_PLAN_DIR;

json readJson(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

/// A file in a fresh temporary directory, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() /
           ("mscclpp-plan-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / name).string();
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void write(const std::string& text) const {
    std::ofstream f(path_, std::ios::binary);
    f << text;
  }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string path_;
};

/// Loads `plan` (written to a file) for `rank` and returns the ExecutorError message; fails the test if
/// it loads.
std::string loadError(const json& plan, int rank = 0) {
  TempFile file("plan.json");
  file.write(plan.dump());
  try {
    ExecutionPlan p(file.path(), rank);
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::ExecutorError) << e.what();
    std::string what = e.what();
    EXPECT_NE(what.find(file.path()), std::string::npos) << "the message does not name the file: " << what;
    return what;
  }
  ADD_FAILURE() << "the plan loaded";
  return "";
}

/// Loads the plan at `path` and returns the ExecutorError message; fails the test if it loads or the
/// message does not name the path.
std::string fileError(const std::string& path) {
  try {
    ExecutionPlan p(path, 0);
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::ExecutorError) << e.what();
    std::string what = e.what();
    EXPECT_NE(what.find("execution plan '" + path + "', rank 0: "), std::string::npos)
        << "the message does not name the path: " << what;
    return what;
  }
  ADD_FAILURE() << "the plan at " << path << " loaded";
  return "";
}

json twoRankPlan(const std::string& name = "allreduce_twoshot_2ranks.json") { return readJson(kPlanDir + "/" + name); }

void expectContains(const std::string& what, std::initializer_list<const char*> parts) {
  for (const char* part : parts) EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
}

json& op(json& plan, int gpu, int tb, int index) { return plan["gpus"][gpu]["threadblocks"][tb]["ops"][index]; }

}  // namespace

TEST(ExecutorPlanTest, EveryTestPlanLoadsAndResolvesForEachOfItsRanks) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kPlanDir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const json j = readJson(entry.path().string());
    const int n = static_cast<int>(j["gpus"].size());
    for (int rank = 0; rank < n; ++rank) {
      SCOPED_TRACE(entry.path().string() + " rank " + std::to_string(rank));
      ExecutionPlan plan(entry.path().string(), rank);
      EXPECT_EQ(plan.name(), j["name"].get<std::string>());
      EXPECT_EQ(plan.collective(), j["collective"].get<std::string>());
      EXPECT_EQ(plan.isInPlace(), j["inplace"].get<bool>());
      const auto& impl = ExecutionPlanAccess::impl(plan);
      const auto& gpu = impl->self();
      // A size every chunk count of the plan divides: 16-byte units times all counts.
      const uint64_t unit = 16ull * n * n * 12;
      ASSERT_GT(gpu.inputChunks, 0u);
      const uint64_t in = unit * gpu.inputChunks;
      const uint64_t out = gpu.outputChunks > 0 ? unit * gpu.outputChunks : in;  // in place: no output chunks
      for (PacketType pt : {PacketType::LL8, PacketType::LL16}) {
        const auto r = impl->resolve(in, out, pt);
        EXPECT_EQ(r.chunkSize, unit);
        EXPECT_EQ(r.blocks.size(), gpu.threadblocks.size());
        for (const auto& o : r.operands) {
          if (!o.remote) {
            const uint64_t bytes = o.buffer == 0 ? in : o.buffer == 1 ? out : r.scratchSize;
            EXPECT_LE(o.offset + o.size, bytes);
          }
        }
      }
    }
  }
  EXPECT_GE(files, 3 * 10);
}

TEST(ExecutorPlanTest, ReadsTopLevelFieldsAndDefaults) {
  json j = twoRankPlan();
  j.erase("num_threads_per_block");
  j.erase("min_message_size");
  j.erase("max_message_size");
  j.erase("buffer_alignment");
  j.erase("use_double_scratch_buffer");
  TempFile file("plan.json");
  file.write(j.dump());
  ExecutionPlan plan(file.path(), 1);
  const auto& impl = ExecutionPlanAccess::impl(plan);
  EXPECT_EQ(impl->nThreadsPerBlock, 1024);
  EXPECT_EQ(plan.minMessageSize(), 0u);
  EXPECT_EQ(plan.maxMessageSize(), SIZE_MAX);
  EXPECT_EQ(impl->bufferAlignment, 16u);
  EXPECT_FALSE(impl->doubleScratchBuffer);
  EXPECT_FALSE(impl->reuseResources);
  EXPECT_FALSE(impl->isUsingPacket);
  EXPECT_EQ(impl->rank, 1);
}

TEST(ExecutorPlanTest, GpuChannelsMayNameTheirTypeType) {
  json j = twoRankPlan();
  for (auto& g : j["gpus"]) {
    for (auto& c : g["channels"]) {
      c["type"] = c["channel_type"];
      c.erase("channel_type");
    }
  }
  j["max_message_size"] = UINT64_MAX;
  TempFile file("plan.json");
  file.write(j.dump());
  ExecutionPlan plan(file.path(), 0);
  EXPECT_EQ(ExecutionPlanAccess::impl(plan)->self().memoryChannels.size(), j["gpus"][0]["channels"].size());
  EXPECT_EQ(plan.maxMessageSize(), SIZE_MAX);
}

TEST(ExecutorPlanTest, MissingFileIsRefusedAsMissing) {
  expectContains(fileError("/nonexistent/plan.json"), {"'/nonexistent/plan.json'", "the file does not exist"});
}

TEST(ExecutorPlanTest, DirectoryIsRefusedAsADirectory) {
  TempFile file("plans");
  std::filesystem::create_directory(file.path());
  expectContains(fileError(file.path()), {"the path is a directory, not a plan file"});
}

TEST(ExecutorPlanTest, FifoIsRefusedWithoutWaitingForAWriter) {
  TempFile file("plan.fifo");
  ASSERT_EQ(::mkfifo(file.path().c_str(), 0600), 0) << std::strerror(errno);
  // Opening a FIFO for reading waits for a writer: the test would hang here if the loader did.
  expectContains(fileError(file.path()), {"the path is a FIFO, not a plan file"});
}

TEST(ExecutorPlanTest, PathThroughAFileIsRefused) {
  TempFile file("plan.json");
  file.write(twoRankPlan().dump());
  const std::string below = file.path() + "/plan.json";
  expectContains(fileError(below), {below.c_str(), "a component of the path is not a directory"});
}

TEST(ExecutorPlanTest, FileOverOneGibIsRefusedUnread) {
  TempFile file("huge.json");
  file.write("");
  // Sparse: no disk space is used, and the loader refuses it from its size alone.
  std::filesystem::resize_file(file.path(), (1ull << 30) + 1);
  expectContains(fileError(file.path()), {"the file has 1073741825 bytes, more than the 1 GiB a plan may have"});
}

TEST(ExecutorPlanTest, UnreadableFileIsRefusedAsUnreadable) {
  TempFile file("plan.json");
  file.write(twoRankPlan().dump());
  ASSERT_EQ(::chmod(file.path().c_str(), 0), 0) << std::strerror(errno);
  if (::geteuid() != 0) {
    expectContains(fileError(file.path()), {"the file is not readable (permission denied)"});
    return;
  }
  // Root reads every file: the load runs in a child process that has given root up, and reports the
  // message through a pipe.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0) << std::strerror(errno);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    ::close(fds[0]);
    std::string message;
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
      message = std::string("cannot give root up: ") + std::strerror(errno);
    } else {
      try {
        ExecutionPlan plan(file.path(), 0);
        message = "the plan loaded";
      } catch (const Error& e) {
        message =
            std::string(e.getErrorCode() == ErrorCode::ExecutorError ? "ExecutorError: " : "other error: ") + e.what();
      }
    }
    const ssize_t written = ::write(fds[1], message.data(), message.size());
    ::_exit(written == static_cast<ssize_t>(message.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string message;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) message.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed: " << message;
  if (message.rfind("cannot give root up", 0) == 0) GTEST_SKIP() << message;
  expectContains(message, {"ExecutorError: ", file.path().c_str(), "the file is not readable (permission denied)"});
}

TEST(ExecutorPlanTest, PlanForMoreRanksThanTheCommunicatorIsRefusedBeforeSetup) {
  const std::string path = kPlanDir + "/allreduce_oneshot_3ranks.json";
  const std::string name = readJson(path)["name"].get<std::string>();
  mscclpp::test::ThreadBootstrap::run(2, [&](std::shared_ptr<mscclpp::test::ThreadBootstrap> bootstrap) {
    const int rank = bootstrap->getRank();
    ExecutionPlan plan(path, rank);  // ranks 0 and 1 of the plan's 3 load
    Executor executor(std::make_shared<Communicator>(bootstrap));
    // Host memory: the refusal comes before setup touches a buffer or a GPU (there is none here).
    std::vector<uint64_t> in(64), out(64);
    try {
      executor.execute(rank, in.data(), out.data(), 512, 512, DataType::FLOAT32, plan, nullptr);
      ADD_FAILURE() << "rank " << rank << ": executed";
    } catch (const Error& e) {
      EXPECT_EQ(e.getErrorCode(), ErrorCode::ExecutorError) << e.what();
      expectContains(e.what(),
                     {path.c_str(), ("rank " + std::to_string(rank)).c_str(),
                      ("the plan \"" + name + "\" is written for 3 ranks").c_str(), "the communicator has 2"});
    }
  });
}

TEST(ExecutorPlanTest, EveryOperationTypeHasAName) {
  std::set<std::string> names;
  for (int t = 0; t <= static_cast<int>(executor::kLastOp); ++t) {
    const auto type = static_cast<executor::OpType>(t);
    const std::string name = executor::opName(type);
    EXPECT_NE(name, "?") << "operation type " << t << " has no name";
    EXPECT_TRUE(names.insert(name).second) << name << " names two operation types";
    EXPECT_EQ(executor::opByName(name), type) << name;
  }
  EXPECT_EQ(executor::opByName("glres"), std::nullopt);
  EXPECT_EQ(executor::opByName("frobnicate"), std::nullopt);
}

TEST(ExecutorPlanTest, UnknownOperationIsNamedWithItsPlace) {
  json j = twoRankPlan();
  op(j, 0, 2, 1)["name"] = "frobnicate";
  expectContains(loadError(j, 0), {"rank 0", "threadblock 2", "op 1", "unknown operation \"frobnicate\""});
}

TEST(ExecutorPlanTest, EveryOperationNameIsKnown) {
  // Each name from the format appears in some test plan, except the NVLS one, which is refused.
  std::set<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(kPlanDir)) {
    if (entry.path().extension() != ".json") continue;
    const json j = readJson(entry.path().string());
    for (const auto& g : j["gpus"]) {
      for (const auto& tb : g["threadblocks"]) {
        for (const auto& o : tb["ops"]) {
          seen.insert(o["name"].get<std::string>());
          if (o.contains("ops")) {
            for (const auto& inner : o["ops"]) seen.insert(inner["name"].get<std::string>());
          }
        }
      }
    }
  }
  for (const char* name :
       {"nop",    "barrier", "put",    "ppkt", "rppkt",     "pws",     "pwsf",     "get",         "copy",
        "cpkt",   "upkt",    "signal", "wait", "flush",     "re",      "repkt",    "recpkt",      "res",
        "respkt", "recspkt", "rre",    "rres", "rlxsignal", "rlxwait", "pipeline", "sem_release", "sem_acquire"}) {
    EXPECT_TRUE(seen.count(name)) << name << " is exercised by no test plan";
  }
}

TEST(ExecutorPlanTest, MultimemOperationIsNotSupported) {
  json j = twoRankPlan();
  op(j, 1, 0, 3)["name"] = "glres";
  expectContains(loadError(j, 1), {"rank 1", "threadblock 0", "op 3", "not supported"});
}

TEST(ExecutorPlanTest, SwitchChannelIsNotSupported) {
  json j = twoRankPlan();
  j["gpus"][0]["channels"].push_back({{"channel_type", "switch"}, {"buff", "i"}, {"rank_groups", json::array()}});
  expectContains(loadError(j), {"gpu 0", "switch channels", "not supported"});
}

TEST(ExecutorPlanTest, ChannelIdOutOfRange) {
  json j = twoRankPlan();
  op(j, 0, 1, 0)["channel_ids"] = {7};
  expectContains(loadError(j), {"threadblock 1", "op 0 (signal)", "'channel_ids' is 7, outside [0, 0]"});
  j = twoRankPlan();
  j["gpus"][0]["threadblocks"][3]["channels"][0]["channel_ids"] = {99};
  expectContains(loadError(j), {"threadblock 3", "channels[0]", "'channel_ids' is 99"});
}

TEST(ExecutorPlanTest, ChunkIndexPastTheBuffer) {
  json j = twoRankPlan();
  json& rres = op(j, 0, 0, 3);
  ASSERT_EQ(rres["name"], "rres");
  rres["src_buff"][0]["index"] = 2;  // the input has 2 chunks: [2, 3) is past it
  expectContains(loadError(j), {"threadblock 0", "op 3 (rres)", "src_buff[0]", "chunks [2, 3) of the input buffer"});
  j = twoRankPlan();
  op(j, 0, 0, 3)["dst_buff"][1]["size"] = 2;  // remote: chunks [1, 3) of a 2-chunk output
  op(j, 0, 0, 3)["dst_buff"][1]["index"] = 1;
  expectContains(loadError(j), {"dst_buff[1]", "of GPU 1's output buffer, which has 2 chunks"});
}

TEST(ExecutorPlanTest, RemoteBufferIdOutOfRange) {
  json j = twoRankPlan();
  op(j, 0, 0, 3)["src_buff"][1]["buffer_id"] = 5;
  expectContains(loadError(j), {"op 3 (rres)", "'buffer_id' is 5"});
  j = twoRankPlan();
  j["gpus"][0]["threadblocks"][0]["remote_buffer_refs"][0]["remote_buffer_ids"] = {3};
  expectContains(loadError(j), {"threadblock 0", "remote_buffer_refs[0]", "'remote_buffer_ids' is 3"});
}

TEST(ExecutorPlanTest, MissingKeys) {
  for (const char* key : {"name", "collective", "protocol", "inplace", "gpus"}) {
    json j = twoRankPlan();
    j.erase(key);
    expectContains(loadError(j), {(std::string("missing key '") + key + "'").c_str()});
  }
  for (const char* key : {"id", "input_chunks", "output_chunks", "scratch_chunks"}) {
    json j = twoRankPlan();
    j["gpus"][1].erase(key);
    expectContains(loadError(j), {(std::string("missing key '") + key + "'").c_str()});
  }
  json j = twoRankPlan();
  j["gpus"][0]["threadblocks"][1].erase("ops");
  expectContains(loadError(j), {"threadblock 1", "missing key 'ops'"});
  j = twoRankPlan();
  op(j, 0, 0, 3).erase("dst_buff");
  expectContains(loadError(j), {"op 3 (rres)", "missing key 'dst_buff'"});
  j = twoRankPlan();
  op(j, 0, 0, 3)["src_buff"][0].erase("index");
  expectContains(loadError(j), {"src_buff[0]", "missing key 'index'"});
}

TEST(ExecutorPlanTest, WrongTypes) {
  json j = twoRankPlan();
  j["inplace"] = "yes";
  expectContains(loadError(j), {"'inplace' must be a boolean, got string"});
  j = twoRankPlan();
  j["gpus"][0]["input_chunks"] = "2";
  expectContains(loadError(j), {"gpu 0", "'input_chunks' must be an integer, got string"});
  j = twoRankPlan();
  j["gpus"] = json::object();
  expectContains(loadError(j), {"'gpus' must be an array, got object"});
  j = twoRankPlan();
  op(j, 0, 0, 3)["src_buff"] = 3;
  expectContains(loadError(j), {"'src_buff' must be an array, got number"});
  j = twoRankPlan();
  j["protocol"] = "Fast";
  expectContains(loadError(j), {"'protocol' is \"Fast\""});
  j = twoRankPlan();
  op(j, 0, 0, 3)["src_buff"][0]["type"] = "x";
  expectContains(loadError(j), {"the buffer types are"});
  j = twoRankPlan();
  j["num_threads_per_block"] = 4096;
  expectContains(loadError(j), {"'num_threads_per_block' is 4096"});
  j = json::array();
  expectContains(loadError(j), {"must be a JSON object, got array"});
}

TEST(ExecutorPlanTest, PlanForOtherRanks) {
  expectContains(loadError(twoRankPlan(), 5), {"rank 5", "written for ranks 0..1, not for rank 5"});
  json j = twoRankPlan();
  j["gpus"][1]["id"] = 0;
  expectContains(loadError(j), {"GPU id 0 appears twice"});
}

TEST(ExecutorPlanTest, InconsistentPlans) {
  json j = twoRankPlan();
  j["gpus"][0]["channels"][0]["connected_to"] = {0};
  expectContains(loadError(j), {"connects GPU 0 to itself"});
  j = twoRankPlan();
  j["gpus"][0]["remote_buffers"][0]["rank"] = 0;
  expectContains(loadError(j), {"remote buffer on the GPU itself"});
  j = twoRankPlan();
  j["gpus"][0]["threadblocks"][2]["id"] = 1;
  expectContains(loadError(j), {"threadblock id 1 appears twice"});
  j = twoRankPlan();
  j["min_message_size"] = 100;
  j["max_message_size"] = 10;
  expectContains(loadError(j), {"exceeds 'max_message_size'"});
  j = twoRankPlan();
  op(j, 0, 0, 3)["channel_type"] = "port";
  expectContains(loadError(j), {"op 3 (rres)", "no remote buffers for port channels"});
}

TEST(ExecutorPlanTest, BarrierSemaphoreAndPipelineFields) {
  json j = twoRankPlan("reduce_scatter_2ranks.json");
  json& barrier = op(j, 0, 1, 4);
  ASSERT_EQ(barrier["name"], "barrier");
  barrier["num_threadblocks"] = 9;
  expectContains(loadError(j), {"threadblock 1", "op 4 (barrier)", "'num_threadblocks' is 9"});
  j = twoRankPlan("reduce_scatter_2ranks.json");
  op(j, 0, 1, 4).erase("barrier_id");
  expectContains(loadError(j), {"missing key 'barrier_id'"});

  j = twoRankPlan("allgather_2ranks.json");
  bool found = false;
  for (auto& o : j["gpus"][0]["threadblocks"][0]["ops"]) {
    if (o["name"] == "sem_acquire") {
      o["semaphore_ids"] = {4};
      found = true;
    }
  }
  ASSERT_TRUE(found);
  expectContains(loadError(j), {"(sem_acquire)", "'semaphore_ids' is 4"});

  j = twoRankPlan("allreduce_pipeline_2ranks.json");
  json& pipeline = op(j, 0, 0, 3);
  ASSERT_EQ(pipeline["name"], "pipeline");
  json nested = pipeline;
  pipeline["ops"].push_back(nested);
  expectContains(loadError(j), {"pipeline inside a pipeline"});
  j = twoRankPlan("allreduce_pipeline_2ranks.json");
  op(j, 0, 0, 3)["iter_context"]["unit_size"] = 100;
  expectContains(loadError(j), {"'unit_size' 100 is not a multiple of the buffer alignment 16"});
  j = twoRankPlan("allreduce_pipeline_2ranks.json");
  op(j, 0, 0, 3)["ops"][0]["name"] = "bogus";
  expectContains(loadError(j), {"pipeline op 0", "unknown operation"});
  j = twoRankPlan("allreduce_pipeline_2ranks.json");
  op(j, 0, 0, 3)["ops"][2]["src_buff"] = json::array();
  for (int i = 0; i < 33; ++i)
    op(j, 0, 0, 3)["ops"][2]["src_buff"].push_back({{"type", "i"}, {"index", 0}, {"size", 1}});
  expectContains(loadError(j), {"pipeline op 2 (re)", "more than 32"});
  j = twoRankPlan("allreduce_pipeline_2ranks.json");
  const int groupSize = op(j, 0, 0, 3)["ops"][2]["tbg_info"]["tbg_size"];
  op(j, 0, 0, 3)["ops"][2]["tbg_info"]["tb_id"] = groupSize;
  const std::string outOfGroup = "'tb_id' is " + std::to_string(groupSize);
  expectContains(loadError(j), {"pipeline op 2 (re)", outOfGroup.c_str()});
}

TEST(ExecutorPlanTest, PacketOperationsNeedLLAndScratch) {
  json j = twoRankPlan("allreduce_oneshot_ll_2ranks.json");
  j["protocol"] = "Simple";
  expectContains(loadError(j), {"protocol is not \"LL\""});
  j = twoRankPlan("allreduce_oneshot_ll_2ranks.json");
  op(j, 0, 0, 1)["src_buff"][1]["type"] = "o";
  op(j, 0, 0, 1)["src_buff"][1]["index"] = 0;
  expectContains(loadError(j), {"op 1 (repkt)", "scratch buffer"});
  j = twoRankPlan("allreduce_oneshot_ll_2ranks.json");
  op(j, 0, 0, 0)["reduce_op"] = "max";
  expectContains(loadError(j), {"'reduce_op' \"max\" is not supported"});
}

TEST(ExecutorPlanTest, GarbageIsRefusedQuickly) {
  TempFile file("garbage.json");
  {
    std::mt19937_64 rng(42);
    std::string text(100u << 20, '\0');
    for (size_t i = 0; i < text.size(); i += 8) {
      const uint64_t v = rng();
      std::memcpy(&text[i], &v, std::min<size_t>(8, text.size() - i));
    }
    file.write(text);
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    ExecutionPlan plan(file.path(), 0);
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::ExecutorError);
    expectContains(e.what(), {"garbage.json", "not valid JSON"});
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // 100 MB of nesting would build a tree of 100 million arrays: refused at the depth limit.
  file.write(std::string(100u << 20, '['));
  try {
    ExecutionPlan plan(file.path(), 0);
    FAIL() << "loaded";
  } catch (const Error& e) {
    expectContains(e.what(), {"garbage.json", "nests deeper"});
  }
  file.write("{\"name\": \"x\", \"gpus\": [");
  try {
    ExecutionPlan plan(file.path(), 0);
    FAIL() << "loaded";
  } catch (const Error& e) {
    expectContains(e.what(), {"not valid JSON"});
  }
}

TEST(ExecutorPlanTest, SizeChecks) {
  TempFile file("plan.json");
  json j = twoRankPlan();  // 2 input and 2 output chunks, 16-byte alignment
  j["min_message_size"] = 64;
  j["max_message_size"] = 1 << 20;
  file.write(j.dump());
  ExecutionPlan plan(file.path(), 0);
  const auto& impl = ExecutionPlanAccess::impl(plan);
  auto resolveError = [&](uint64_t in, uint64_t out, PacketType pt = PacketType::LL16) {
    try {
      impl->resolve(in, out, pt);
    } catch (const Error& e) {
      EXPECT_EQ(e.getErrorCode(), ErrorCode::ExecutorError);
      return std::string(e.what());
    }
    ADD_FAILURE() << "resolved " << in << " / " << out;
    return std::string();
  };
  EXPECT_EQ(impl->resolve(1024, 1024, PacketType::LL16).chunkSize, 512u);
  expectContains(resolveError(1000, 1000), {"plan.json", "rank 0", "not a multiple of 2 chunks of 16-byte units"});
  expectContains(resolveError(48, 48), {"not a multiple"});  // 3 units into 2 chunks
  expectContains(resolveError(1024, 2048), {"differ in size"});
  expectContains(resolveError(32, 32), {"outside the plan's range [64, 1048576]"});
  expectContains(resolveError(4u << 20, 4u << 20), {"outside the plan's range"});
  // Sizes past 2^56 bytes are refused before any size is derived from them (2^63 would wrap the scratch).
  for (uint64_t huge : {(uint64_t{1} << 56) + 32, uint64_t{1} << 63}) {
    expectContains(resolveError(huge, 1024), {"the input is larger than the 72057594037927936 bytes"});
    expectContains(resolveError(1024, huge), {"the output is larger than the 72057594037927936 bytes"});
  }

  // Sizes within the limit whose scratch is not: chunks of 2^55 bytes, and a scratch of 6 of them as
  // packets, doubled.
  json open = twoRankPlan("allreduce_twoshot_ll_2ranks.json");
  open["max_message_size"] = UINT64_MAX;
  file.write(open.dump());
  ExecutionPlan openPlan(file.path(), 0);
  try {
    ExecutionPlanAccess::impl(openPlan)->resolve(uint64_t{1} << 56, uint64_t{1} << 56, PacketType::LL16);
    ADD_FAILURE() << "resolved";
  } catch (const Error& e) {
    expectContains(e.what(), {"the plan's scratch (6 chunks of 36028797018963968 bytes, 4 times) is larger than"});
  }

  json ll = twoRankPlan("allreduce_oneshot_ll_2ranks.json");
  ll["buffer_alignment"] = 4;
  file.write(ll.dump());
  ExecutionPlan llPlan(file.path(), 1);
  const auto& llImpl = ExecutionPlanAccess::impl(llPlan);
  // 20-byte chunks, split among the blocks in 4-byte units: LL8 payloads (4 bytes) fit; a 4-byte part is
  // no whole LL16 payload (8 bytes).
  EXPECT_NO_THROW(llImpl->resolve(20, 20, PacketType::LL8));
  try {
    llImpl->resolve(20, 20, PacketType::LL16);
    ADD_FAILURE() << "resolved";
  } catch (const Error& e) {
    expectContains(e.what(),
                   {"threadblock 0", "(ppkt)", "a packet range of 4 bytes", "8-byte payload of LL16 packets"});
  }
}

TEST(ExecutorPlanTest, DoubleScratchHalvesAgreeAcrossRanks) {
  for (int rank = 0; rank < 2; ++rank) {
    ExecutionPlan plan(kPlanDir + "/allreduce_twoshot_ll_2ranks.json", rank);
    const auto r = ExecutionPlanAccess::impl(plan)->resolve(4096, 4096, PacketType::LL16);
    // 6 scratch chunks of 2048 bytes, as packets (x2), twice.
    EXPECT_EQ(r.scratchHalf, 6u * 2048 * 2);
    EXPECT_EQ(r.scratchSize, 2 * r.scratchHalf);
  }
}

TEST(ExecutorPlanTest, RequestsAndHandlesMatch) {
  auto plan = std::make_shared<ExecutionPlan>(kPlanDir + "/allgather_2ranks.json", 0);
  const std::unordered_map<std::string, std::vector<uint64_t>> hints;
  const std::string coll = "allgather";
  std::vector<char> out(64);
  ExecutionRequest inPlace{2, 2, 1, out.data() + 32, out.data(), 32, coll, hints};
  ExecutionRequest outOfPlace{2, 2, 1, out.data(), out.data() + 8, 32, coll, hints};
  EXPECT_TRUE(inPlace.isInPlace());
  EXPECT_FALSE(outOfPlace.isInPlace());
  auto handle = ExecutionPlanHandle::create("ag", 2, 2, plan, {{"default", 1}});
  EXPECT_TRUE(handle->match(outOfPlace));
  EXPECT_FALSE(handle->match(inPlace));
  ExecutionRequest wrongWorld{4, 4, 1, out.data(), out.data() + 8, 32, coll, hints};
  EXPECT_FALSE(handle->match(wrongWorld));
}

TEST(ExecutorPlanTest, RegistrySelectsWithTheUserSelectorFirst) {
  auto registry = ExecutionPlanRegistry::getInstance();
  registry->clear();
  auto a = ExecutionPlanHandle::create("a", 2, 2,
                                       std::make_shared<ExecutionPlan>(kPlanDir + "/allreduce_twoshot_2ranks.json", 0));
  auto b = ExecutionPlanHandle::create("b", 2, 2,
                                       std::make_shared<ExecutionPlan>(kPlanDir + "/allreduce_oneshot_2ranks.json", 0));
  registry->registerPlan(a);
  registry->registerPlan(b);
  EXPECT_THROW(registry->registerPlan(nullptr), Error);
  EXPECT_EQ(registry->getPlans("allreduce").size(), 2u);
  EXPECT_TRUE(registry->getPlans("broadcast").empty());
  EXPECT_EQ(registry->get("b"), b);
  EXPECT_EQ(registry->get("c"), nullptr);
  std::vector<char> in(64), out(64);
  const std::unordered_map<std::string, std::vector<uint64_t>> hints;
  EXPECT_EQ(registry->select("allreduce", 2, 2, 0, in.data(), out.data(), 64, hints), nullptr);
  registry->setDefaultSelector([](auto plans, const ExecutionRequest&) { return plans.empty() ? nullptr : plans[0]; });
  EXPECT_EQ(registry->select("allreduce", 2, 2, 0, in.data(), out.data(), 64, hints), a);
  registry->setSelector([&](auto plans, const ExecutionRequest& req) {
    EXPECT_EQ(req.messageSize, 64u);
    EXPECT_EQ(plans.size(), 2u);
    return plans[1];
  });
  EXPECT_EQ(registry->select("allreduce", 2, 2, 0, in.data(), out.data(), 64, hints), b);
  // The in-place request matches neither (both plans are out of place): the user selector sees none.
  registry->setSelector([](auto plans, const ExecutionRequest&) { return plans.empty() ? nullptr : plans[0]; });
  EXPECT_EQ(registry->select("allreduce", 2, 2, 0, in.data(), in.data(), 64, hints), nullptr);
  registry->clear();
  EXPECT_TRUE(registry->getPlans("allreduce").empty());
}
