// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <gtest/gtest.h>

#include <mscclpp/env.hpp>

#include "common/env_builder.hpp"

using namespace mscclpp;

TEST(EnvTest, DefaultsWhenNothingIsSet) {
  auto e = EnvBuilder::fromMap({{"HOME", "/home/u"}});
  EXPECT_EQ(e->logLevel, "ERROR");
  EXPECT_EQ(e->logSubsys, "ALL");
  EXPECT_EQ(e->logFile, "");
  EXPECT_EQ(e->debug, "");
  EXPECT_EQ(e->executionPlanDir, "/home/u/.cache/mscclpp_default");
  EXPECT_FALSE(e->cudaIpcUseDefaultStream);
  EXPECT_FALSE(e->disableChannelCache);
  EXPECT_FALSE(e->forceDisableNvls);
  EXPECT_EQ(e->ipcHandleTypes, "");
  EXPECT_EQ(e->bootstrapTimeoutSec, 30);
  EXPECT_TRUE(EnvBuilder::problems(*e).empty());
}

TEST(EnvTest, StringVariablesAreReadVerbatim) {
  auto e = EnvBuilder::fromMap({{"MSCCLPP_SOCKET_IFNAME", "^docker,lo"},
                                {"MSCCLPP_HCA_DEVICES", "mlx5_0,mlx5_1"},
                                {"MSCCLPP_HOSTID", "node-17"},
                                {"MSCCLPP_IPC_HANDLE_TYPES", "posixfd,runtime"},
                                {"MSCCLPP_EXECUTION_PLAN_DIR", "/plans"},
                                {"MSCCLPP_NCCL_LIB_PATH", "/usr/lib/libnccl.so"}});
  EXPECT_EQ(e->socketIfname, "^docker,lo");
  EXPECT_EQ(e->hcaDevices, "mlx5_0,mlx5_1");
  EXPECT_EQ(e->hostid, "node-17");
  EXPECT_EQ(e->ipcHandleTypes, "posixfd,runtime");
  EXPECT_EQ(e->executionPlanDir, "/plans");
  EXPECT_EQ(e->ncclSharedLibPath, "/usr/lib/libnccl.so");
}

TEST(EnvTest, BoolIsTrueForAnyValueButZero) {
  EXPECT_TRUE(EnvBuilder::fromMap({{"MSCCLPP_FORCE_DISABLE_NVLS", "1"}})->forceDisableNvls);
  EXPECT_TRUE(EnvBuilder::fromMap({{"MSCCLPP_FORCE_DISABLE_NVLS", "yes"}})->forceDisableNvls);
  EXPECT_TRUE(EnvBuilder::fromMap({{"MSCCLPP_FORCE_DISABLE_NVLS", ""}})->forceDisableNvls);
  EXPECT_FALSE(EnvBuilder::fromMap({{"MSCCLPP_FORCE_DISABLE_NVLS", "0"}})->forceDisableNvls);
  EXPECT_TRUE(EnvBuilder::fromMap({{"MSCCLPP_CUDAIPC_USE_DEFAULT_STREAM", "true"}})->cudaIpcUseDefaultStream);
}

TEST(EnvTest, NvlsIsEnabledOnlyOnRequest) {
  EXPECT_FALSE(EnvBuilder::fromMap({})->enableNvls);
  EXPECT_TRUE(EnvBuilder::fromMap({{"MSCCLPP_ENABLE_NVLS", "1"}})->enableNvls);
  EXPECT_FALSE(EnvBuilder::fromMap({{"MSCCLPP_ENABLE_NVLS", "0"}})->enableNvls);
}

TEST(EnvTest, DependentLaunchesAreOnUnlessTurnedOff) {
  EXPECT_TRUE(EnvBuilder::fromMap({})->dependentLaunch);
  EXPECT_TRUE(EnvBuilder::fromMap({{"MSCCLPP_DEPENDENT_LAUNCH", "1"}})->dependentLaunch);
  EXPECT_FALSE(EnvBuilder::fromMap({{"MSCCLPP_DEPENDENT_LAUNCH", "0"}})->dependentLaunch);
}

TEST(EnvTest, IntegerIsParsed) {
  EXPECT_EQ(EnvBuilder::fromMap({{"MSCCLPP_BOOTSTRAP_TIMEOUT", "5"}})->bootstrapTimeoutSec, 5);
  EXPECT_EQ(EnvBuilder::fromMap({{"MSCCLPP_BOOTSTRAP_TIMEOUT", "-1"}})->bootstrapTimeoutSec, -1);
}

TEST(EnvTest, BadIntegerKeepsTheDefaultAndIsReported) {
  auto e = EnvBuilder::fromMap({{"MSCCLPP_BOOTSTRAP_TIMEOUT", "ten"}});
  EXPECT_EQ(e->bootstrapTimeoutSec, 30);
  EXPECT_NE(EnvBuilder::problems(*e).find("MSCCLPP_BOOTSTRAP_TIMEOUT='ten'"), std::string::npos);
  EXPECT_EQ(EnvBuilder::fromMap({{"MSCCLPP_BOOTSTRAP_TIMEOUT", "5s"}})->bootstrapTimeoutSec, 30);
  EXPECT_EQ(EnvBuilder::fromMap({{"MSCCLPP_BOOTSTRAP_TIMEOUT", "99999999999999999999999"}})->bootstrapTimeoutSec, 30);
}

TEST(EnvTest, RemembersWhichLoggingVariablesWereSet) {
  auto e = EnvBuilder::fromMap({{"MSCCLPP_DEBUG", "INFO"}});
  EXPECT_TRUE(EnvBuilder::isSet(*e, "MSCCLPP_DEBUG"));
  EXPECT_FALSE(EnvBuilder::isSet(*e, "MSCCLPP_LOG_LEVEL"));
}

TEST(EnvTest, ProcessEnvIsASingleton) { EXPECT_EQ(env().get(), env().get()); }
