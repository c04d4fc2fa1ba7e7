// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The NCCL API's argument checks and the paths that need no GPU: each bad input gets the NCCL code a
// caller expects and a last-error message naming the cause.

#include <gtest/gtest.h>
#include <mscclpp/nccl.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "ext/nccl/api_functions.hpp"
#include "ext/nccl/comm.hpp"
#include "ext/nccl/config.hpp"
#include "ext/nccl/real_nccl.hpp"
#include "overflow_cases.hpp"

namespace {

std::string lastError() { return ncclGetLastError(nullptr); }

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

/// Rank `rank` of a communicator of `nRanks` that never joined a group (no GPU needed): enough for
/// everything a call does before it communicates. It has neither our collectives nor a real NCCL,
/// so an operation that passed its checks fails with ncclInvalidUsage ("cannot run") instead of
/// launching anything.
std::unique_ptr<ncclComm> detachedComm(int rank, int nRanks) {
  auto comm = std::make_unique<ncclComm>();
  comm->rank = rank;
  comm->nRanks = nRanks;
  return comm;
}

ncclUniqueId someId() {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  return id;
}

TEST(NcclVersion, Reports22803) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 22803);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
}

TEST(NcclErrorString, EveryCodeHasItsOwnText) {
  for (int a = ncclSuccess; a < ncclNumResults; ++a) {
    for (int b = a + 1; b < ncclNumResults; ++b) {
      EXPECT_STRNE(ncclGetErrorString(static_cast<ncclResult_t>(a)), ncclGetErrorString(static_cast<ncclResult_t>(b)));
    }
  }
  EXPECT_STREQ(ncclGetErrorString(static_cast<ncclResult_t>(99)), "unknown result code");
}

TEST(NcclUniqueId, TwoIdsDiffer) {
  ncclUniqueId a = someId(), b = someId();
  EXPECT_NE(std::memcmp(&a, &b, sizeof(a)), 0);
  EXPECT_EQ(ncclGetUniqueId(nullptr), ncclInvalidArgument);
}

TEST(NcclInit, NullResultPointerIsInvalidArgument) {
  EXPECT_EQ(ncclCommInitRank(nullptr, 2, someId(), 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("comm"), std::string::npos) << lastError();
}

TEST(NcclInit, RankOutsideTheCommunicatorIsInvalidArgument) {
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 2, someId(), 2), ncclInvalidArgument);
  EXPECT_NE(lastError().find("rank 2 is not in [0, 2)"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommInitRank(&comm, 2, someId(), -1), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(&comm, 0, someId(), 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("nranks 0"), std::string::npos) << lastError();
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclInit, ARankCountAboveTheBootstrapLimitFailsAtOnce) {
  // Without a GPU the call stops at cudaGetDevice, before the bootstrap that bounds the count.
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    GTEST_SKIP() << "needs a GPU: ncclCommInitRank asks for the current device before it reaches the bootstrap";
  }
  const int absurd = std::numeric_limits<int>::max();
  ncclComm_t comm = nullptr;
  const auto start = std::chrono::steady_clock::now();
  const ncclResult_t res = ncclCommInitRank(&comm, absurd, someId(), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(res == ncclInvalidArgument || res == ncclInvalidUsage) << ncclGetErrorString(res);
  EXPECT_NE(lastError().find(std::to_string(absurd)), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("limit"), std::string::npos) << lastError();
  // A hang check, not a speed check: the refusal comes before anything is allocated or awaited, where
  // an unbounded count kept rank 0 allocating for minutes.
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclInit, ConfigWithBadMagicIsInvalidArgument) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0x12345678;
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, someId(), 0, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("magic"), std::string::npos) << lastError();
}

TEST(NcclInit, ConfigWithUnknownVersionIsInvalidArgument) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.version = 100;
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, someId(), 0, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("version 100"), std::string::npos) << lastError();
}

TEST(NcclInit, ConfigWithBadBlockingValueIsInvalidArgument) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 7;
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, someId(), 0, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("blocking = 7"), std::string::npos) << lastError();
}

TEST(NcclConfig, NullMeansBlockingDefaults) {
  mscclpp::nccl::CommConfig out;
  std::string problem;
  ASSERT_TRUE(mscclpp::nccl::readConfig(nullptr, out, problem)) << problem;
  EXPECT_TRUE(out.blocking);
  EXPECT_FALSE(out.splitShare);
  EXPECT_TRUE(out.commName.empty());
}

TEST(NcclConfig, FieldsAreRead) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.splitShare = 1;
  config.commName = "tp0";
  mscclpp::nccl::CommConfig out;
  std::string problem;
  ASSERT_TRUE(mscclpp::nccl::readConfig(&config, out, problem)) << problem;
  EXPECT_FALSE(out.blocking);
  EXPECT_TRUE(out.splitShare);
  EXPECT_EQ(out.commName, "tp0");
  EXPECT_EQ(out.realConfig().blocking, 1);
  EXPECT_STREQ(out.realConfig().commName, "tp0");
}

TEST(NcclConfig, SmallerOlderStructKeepsDefaultsBeyondItsSize) {
  // A 2.14-era caller: its struct ends after maxCTAs, and what lies beyond it is not its data.
  struct {
    ncclConfig_t config;
    char garbage[16];
  } older;
  std::memset(&older, 0x5a, sizeof(older));
  older.config.size = offsetof(ncclConfig_t, netName);
  older.config.magic = 0xcafebeef;
  older.config.version = NCCL_VERSION(2, 14, 0);
  older.config.blocking = 0;
  mscclpp::nccl::CommConfig out;
  std::string problem;
  ASSERT_TRUE(mscclpp::nccl::readConfig(&older.config, out, problem)) << problem;
  EXPECT_FALSE(out.blocking);
  EXPECT_FALSE(out.splitShare);
  EXPECT_TRUE(out.commName.empty());
  // 2.14 had no cgaClusterSize/minCTAs/maxCTAs: they are reset to undefined.
  EXPECT_EQ(out.settings.cgaClusterSize, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(out.settings.minCTAs, NCCL_CONFIG_UNDEF_INT);
}

TEST(NcclConfig, LargerNewerStructIsAccepted) {
  struct {
    ncclConfig_t config;
    int newerFields[8];
  } newer;
  newer.config = NCCL_CONFIG_INITIALIZER;
  newer.config.size = sizeof(newer);
  newer.config.version = NCCL_VERSION(2, 31, 0);
  newer.config.splitShare = 1;
  for (int& f : newer.newerFields) f = 12345;
  mscclpp::nccl::CommConfig out;
  std::string problem;
  ASSERT_TRUE(mscclpp::nccl::readConfig(&newer.config, out, problem)) << problem;
  EXPECT_TRUE(out.splitShare);
  EXPECT_EQ(out.settings.size, sizeof(ncclConfig_t));
}

TEST(NcclConfig, SizeSmallerThanTheHeaderIsRejected) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.size = 8;
  mscclpp::nccl::CommConfig out;
  std::string problem;
  EXPECT_FALSE(mscclpp::nccl::readConfig(&config, out, problem));
  EXPECT_NE(problem.find("size 8"), std::string::npos) << problem;
}

TEST(NcclConfig, MinCtasAboveMaxCtasIsRejected) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.minCTAs = 8;
  config.maxCTAs = 4;
  mscclpp::nccl::CommConfig out;
  std::string problem;
  EXPECT_FALSE(mscclpp::nccl::readConfig(&config, out, problem));
  EXPECT_NE(problem.find("minCTAs"), std::string::npos) << problem;
}

TEST(NcclCollectives, NullCommIsInvalidArgument) {
  int x = 0;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclAllReduce: comm is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllGather(&x, &x, 1, ncclInt32, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclReduceScatter(&x, &x, 1, ncclInt32, ncclSum, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(&x, &x, 1, ncclInt32, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclBcast(&x, 1, ncclInt32, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclReduce(&x, &x, 1, ncclInt32, ncclSum, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclAlltoAll(&x, &x, 1, ncclInt32, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclGather(&x, &x, 1, ncclInt32, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclScatter(&x, &x, 1, ncclInt32, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclSend(&x, 1, ncclInt32, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclRecv(&x, 1, ncclInt32, 0, nullptr, nullptr), ncclInvalidArgument);
}

TEST(NcclArguments, AValidCallPassesTheChecksAndReachesTheRunStep) {
  auto comm = detachedComm(0, 2);
  int x = 0;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, comm.get(), nullptr), ncclInvalidUsage);
  EXPECT_NE(lastError().find("cannot run"), std::string::npos) << lastError();
}

TEST(NcclArguments, CountsWhoseByteSizeOverflowsOrPassesTheLimitAreInvalidArgumentAtOneAndTwoRanks) {
  float x = 0;
  for (int nRanks : {1, 2}) {
    auto comm = detachedComm(0, nRanks);
    const std::vector<mscclpp::test::OverflowCase> cases = mscclpp::test::overflowCases(0, nRanks, &x);
    EXPECT_EQ(cases.size(), nRanks == 1 ? 22u : 27u);
    for (const mscclpp::test::OverflowCase& c : cases) {
      EXPECT_EQ(c.run(comm.get(), nullptr), ncclInvalidArgument) << c.call << " count " << c.count << " at " << nRanks;
      EXPECT_TRUE(startsWith(lastError(), c.call + ": ")) << lastError();
      EXPECT_NE(lastError().find("bytes a buffer of one call may hold"), std::string::npos) << lastError();
    }
  }
}

TEST(NcclArguments, ArgumentCheckFailuresNameTheApiCall) {
  auto comm = detachedComm(0, 2);
  int x = 0;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, static_cast<ncclDataType_t>(42), ncclSum, comm.get(), nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclAllReduce: data type 42")) << lastError();
  EXPECT_EQ(ncclSend(&x, 1, ncclInt32, 5, comm.get(), nullptr), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclSend: peer 5")) << lastError();
  EXPECT_EQ(ncclReduce(&x, nullptr, 1, ncclInt32, ncclSum, 0, comm.get(), nullptr), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclReduce: recvbuff is NULL")) << lastError();
  // Off the root, Reduce's receive buffer is not the caller's to pass.
  EXPECT_EQ(ncclReduce(&x, nullptr, 1, ncclInt32, ncclSum, 1, comm.get(), nullptr), ncclInvalidUsage);
  EXPECT_NE(lastError().find("cannot run"), std::string::npos) << lastError();
}

TEST(NcclInit, FailuresNameTheApiCall) {
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 2, someId(), 5), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommInitRank: rank 5")) << lastError();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 0, someId(), 0, &config), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommInitRankConfig: nranks 0")) << lastError();
  ncclUniqueId id = someId();
  EXPECT_EQ(ncclCommInitRankScalable(&comm, 2, 3, 1, &id, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommInitRankScalable: rank 3")) << lastError();
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclReadiness, ACommStillInitializingIsInvalidArgumentLikeNccl) {
  auto comm = detachedComm(0, 2);
  comm->asyncError = ncclInProgress;
  int x = 0;
  void* handle = nullptr;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, comm.get(), nullptr), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclAllReduce: the communicator is still busy")) << lastError();
  EXPECT_EQ(ncclCommRegister(comm.get(), &x, sizeof(x), &handle), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommRegister: the communicator is still busy")) << lastError();
  int count = 0;
  EXPECT_EQ(ncclCommCount(comm.get(), &count), ncclInvalidArgument);
  ncclResult_t state = ncclSuccess;
  EXPECT_EQ(ncclCommGetAsyncError(comm.get(), &state), ncclSuccess);
  EXPECT_EQ(state, ncclInProgress);
}

TEST(NcclReadiness, ACommWhoseNonblockingCallFailedReturnsThatErrorFromEveryCall) {
  auto comm = detachedComm(0, 2);
  comm->asyncError = ncclRemoteError;
  comm->asyncFailure = "ncclCommInitRankConfig: the peers went away";
  int x = 0;
  void* handle = nullptr;
  ncclRedOp_t op;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, comm.get(), nullptr), ncclRemoteError);
  EXPECT_EQ(ncclCommRegister(comm.get(), &x, sizeof(x), &handle), ncclRemoteError);
  EXPECT_EQ(ncclRedOpCreatePreMulSum(&op, &x, ncclInt32, ncclScalarHostImmediate, comm.get()), ncclRemoteError);
  EXPECT_TRUE(startsWith(lastError(), "ncclRedOpCreatePreMulSum: the communicator failed earlier")) << lastError();
  // The original cause is repeated once, not wrapped again by every call.
  EXPECT_NE(lastError().find("ncclCommInitRankConfig: the peers went away"), std::string::npos) << lastError();
  EXPECT_EQ(lastError().find("failed earlier", lastError().find("failed earlier") + 1), std::string::npos)
      << lastError();
}

TEST(NcclRegistration, DeregisteringTwiceIsInvalidUsage) {
  auto comm = detachedComm(0, 2);
  float buf[16];
  void* handle = nullptr;
  ASSERT_EQ(ncclCommRegister(comm.get(), buf, sizeof(buf), &handle), ncclSuccess) << lastError();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(ncclCommDeregister(comm.get(), handle), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommDeregister(comm.get(), handle), ncclInvalidUsage);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommDeregister: ")) << lastError();
  EXPECT_NE(lastError().find("is not a registration of this communicator"), std::string::npos) << lastError();
}

TEST(NcclRegistration, DeregisteringWhatIsNotAHandleIsInvalidUsage) {
  auto comm = detachedComm(0, 2);
  auto other = detachedComm(0, 2);
  float buf[16];
  void* handle = nullptr;
  ASSERT_EQ(ncclCommRegister(other.get(), buf, sizeof(buf), &handle), ncclSuccess) << lastError();
  // A pointer into the caller's own data, and another communicator's handle.
  EXPECT_EQ(ncclCommDeregister(comm.get(), buf), ncclInvalidUsage);
  EXPECT_EQ(ncclCommDeregister(comm.get(), handle), ncclInvalidUsage);
  // Neither touched the real registration.
  EXPECT_EQ(ncclCommDeregister(other.get(), handle), ncclSuccess) << lastError();
  // NULL is what NCCL hands out with registration disabled; deregistering it does nothing.
  EXPECT_EQ(ncclCommDeregister(comm.get(), nullptr), ncclSuccess);
}

TEST(NcclRegistration, WindowsAreHandedOutAndDeregisteredOnce) {
  auto comm = detachedComm(0, 2);
  float buf[16];
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm.get(), buf, sizeof(buf), &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess)
      << lastError();
  ASSERT_NE(win, nullptr);
  // A window is not a handle of ncclCommRegister, and the other way round.
  EXPECT_EQ(ncclCommDeregister(comm.get(), win), ncclInvalidUsage);
  EXPECT_NE(lastError().find("ncclCommWindowDeregister"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommWindowDeregister(comm.get(), win), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommWindowDeregister(comm.get(), win), ncclInvalidUsage);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommWindowDeregister: ")) << lastError();
  EXPECT_EQ(ncclCommWindowDeregister(comm.get(), reinterpret_cast<ncclWindow_t>(buf)), ncclInvalidUsage);
  EXPECT_EQ(ncclCommWindowDeregister(comm.get(), nullptr), ncclSuccess);
}

TEST(NcclComm, DeviceCommunicatorsOfANullCommAreInvalidArgument) {
  // The device API's structures are opaque to this library; any non-null pointer stands for them here.
  alignas(64) unsigned char storage[256] = {};
  auto* reqs = reinterpret_cast<const ncclDevCommRequirements*>(storage);
  auto* devComm = reinterpret_cast<ncclDevComm*>(storage);
  EXPECT_EQ(ncclDevCommCreate(nullptr, reqs, devComm), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclDevCommCreate: comm is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclDevCommDestroy(nullptr, devComm), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclDevCommDestroy: comm is NULL"), std::string::npos) << lastError();
}

TEST(NcclComm, QueriesOnNullCommAreInvalidArgument) {
  int value = 0;
  ncclResult_t state;
  EXPECT_EQ(ncclCommCount(nullptr, &value), ncclInvalidArgument);
  EXPECT_EQ(ncclCommCuDevice(nullptr, &value), ncclInvalidArgument);
  EXPECT_EQ(ncclCommUserRank(nullptr, &value), ncclInvalidArgument);
  EXPECT_EQ(ncclCommGetAsyncError(nullptr, &state), ncclInvalidArgument);
  EXPECT_EQ(ncclCommFinalize(nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommSplit(nullptr, 0, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommRegister(nullptr, &value, sizeof(value), nullptr), ncclInvalidArgument);
  ncclRedOp_t op;
  EXPECT_EQ(ncclRedOpCreatePreMulSum(&op, &value, ncclInt32, ncclScalarHostImmediate, nullptr), ncclInvalidArgument);
  // As in NCCL, destroying or aborting NULL is a no-op.
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
}

TEST(NcclGroup, EndWithoutStartIsInvalidUsage) {
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_NE(lastError().find("without a matching ncclGroupStart"), std::string::npos) << lastError();
}

TEST(NcclGroup, NestedGroupsCloseAtTheOutermostEnd) {
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
}

TEST(NcclGroup, SimulateEndNeedsAnInitializedSimInfo) {
  ncclSimInfo_t bad{};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&bad), ncclInvalidArgument);
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_EQ(ncclGroupSimulateEnd(&sim), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&sim), ncclInvalidUsage);
}

TEST(NcclMemory, NullResultPointerIsInvalidArgument) {
  EXPECT_EQ(ncclMemAlloc(nullptr, 1024), ncclInvalidArgument);
  EXPECT_EQ(ncclMemFree(nullptr), ncclSuccess);
}

TEST(NcclMemory, FreeingWhatNcclMemAllocDidNotReturnIsInvalidArgument) {
  int local = 0;
  EXPECT_EQ(ncclMemFree(&local), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclMemFree: ")) << lastError();
  EXPECT_NE(lastError().find("was not returned by ncclMemAlloc"), std::string::npos) << lastError();
}

// Run by ctest with MSCCLPP_NCCL_LIB_PATH set (test/nccl/CMakeLists.txt); skipped otherwise.
TEST(NcclFallback, UnopenableLibraryIsReportedWithItsPath) {
  const char* path = std::getenv("MSCCLPP_NCCL_LIB_PATH");
  if (path == nullptr || std::string(path) != "/nonexistent/libnccl.so.2") GTEST_SKIP() << "run by the fallback ctest";
  EXPECT_EQ(mscclpp::nccl::realNccl(), nullptr);
  EXPECT_NE(mscclpp::nccl::realNcclProblem().find("/nonexistent/libnccl.so.2 cannot be opened"), std::string::npos)
      << mscclpp::nccl::realNcclProblem();
}

TEST(NcclFallback, RealNcclIsOpenedAndItsVersionRead) {
  const char* path = std::getenv("MSCCLPP_NCCL_LIB_PATH");
  if (path == nullptr || std::string(path) == "/nonexistent/libnccl.so.2") GTEST_SKIP() << "run by the fallback ctest";
  const mscclpp::nccl::RealNccl* real = mscclpp::nccl::realNccl();
  ASSERT_NE(real, nullptr) << mscclpp::nccl::realNcclProblem();
  EXPECT_GE(real->version, NCCL_VERSION(2, 0, 0));
  EXPECT_NE(real->AllReduce, nullptr);
  EXPECT_NE(reinterpret_cast<void*>(real->GetVersion), reinterpret_cast<void*>(&ncclGetVersion));
}

// The real NCCL's own argument check, reached through ours: a real communicator pointer that is not
// one (NCCL reads its magic, the first 8 bytes, and finds it wrong) makes the real NCCL return
// ncclInvalidArgument, which must reach the caller as it is.
TEST(NcclFallback, RealNcclResultReachesTheCallerUnchanged) {
  const char* path = std::getenv("MSCCLPP_NCCL_LIB_PATH");
  if (path == nullptr || std::string(path) == "/nonexistent/libnccl.so.2") GTEST_SKIP() << "run by the fallback ctest";
  const mscclpp::nccl::RealNccl* real = mscclpp::nccl::realNccl();
  ASSERT_NE(real, nullptr) << mscclpp::nccl::realNcclProblem();
  alignas(64) uint64_t notARealComm[64] = {};
  auto comm = detachedComm(0, 2);
  comm->realLib = real;
  comm->real = reinterpret_cast<ncclComm_t>(notARealComm);
  float scalar = 2.f;
  ncclRedOp_t op;
  EXPECT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm.get()),
            ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), std::string("ncclRedOpCreatePreMulSum: the NCCL at ") + path)) << lastError();
  float buf[16];
  void* handle = nullptr;
  EXPECT_EQ(ncclCommRegister(comm.get(), buf, sizeof(buf), &handle), ncclInvalidArgument);
  EXPECT_TRUE(startsWith(lastError(), "ncclCommRegister: the NCCL at ")) << lastError();
  // Not the real NCCL's communicator to destroy.
  comm->real = nullptr;
}

TEST(NcclFallback, WithoutPathThereIsNoRealNccl) {
  if (std::getenv("MSCCLPP_NCCL_LIB_PATH") != nullptr) GTEST_SKIP() << "MSCCLPP_NCCL_LIB_PATH is set";
  EXPECT_EQ(mscclpp::nccl::realNccl(), nullptr);
  EXPECT_NE(mscclpp::nccl::realNcclProblem().find("MSCCLPP_NCCL_LIB_PATH is not set"), std::string::npos);
}

}  // namespace
