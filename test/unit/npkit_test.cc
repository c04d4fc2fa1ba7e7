// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// NpKit records nothing in this build (npkit.hpp): its calls are accepted and have no effect.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mscclpp/npkit/npkit.hpp>

TEST(NpKitTest, DumpWritesNoTrace) {
  char dirTemplate[] = "/tmp/mscclpp_npkit_XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  const std::filesystem::path dir(dirTemplate);
  NpKit::Init(3);
  NpKit::CollectCpuEvent(NPKIT_EVENT_CONN_ETH_WRITE_ENTRY, 64, 0, 1, 0);
  NpKit::Dump(dir.string());
  NpKit::Shutdown();
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(NpKitTest, NoGpuEventBuffersExist) {
  NpKit::Init(0);
  EXPECT_EQ(NpKit::GetGpuEventCollectContexts(), nullptr);
  NpKit::Shutdown();
}

TEST(NpKitTest, CpuTimestampCanBeReadAndStaysZero) {
  uint64_t* timestamp = NpKit::GetCpuTimestamp();
  ASSERT_NE(timestamp, nullptr);
  EXPECT_EQ(*timestamp, 0u);
  EXPECT_EQ(NpKit::GetCpuTimestamp(), timestamp);
}

TEST(NpKitTest, ShutdownWithoutInitIsHarmless) {
  NpKit::Shutdown();
  NpKit::Shutdown();
  EXPECT_EQ(NpKit::GetGpuEventCollectContexts(), nullptr);
}
