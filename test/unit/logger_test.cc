// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/logger.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "common/env_builder.hpp"

using namespace mscclpp;

namespace {

LogConfig configOf(const std::map<std::string, std::string>& vars) {
  return logConfigFromEnv(*EnvBuilder::fromMap(vars));
}

}  // namespace

TEST(LoggerTest, ParsesLevelsCaseInsensitively) {
  EXPECT_EQ(parseLogLevel("DEBUG"), LogLevel::Debug);
  EXPECT_EQ(parseLogLevel("info"), LogLevel::Info);
  EXPECT_EQ(parseLogLevel("Warn"), LogLevel::Warn);
  EXPECT_EQ(parseLogLevel("ERROR"), LogLevel::Error);
  EXPECT_EQ(parseLogLevel("none"), LogLevel::None);
  EXPECT_FALSE(parseLogLevel("LOUD").has_value());
  EXPECT_FALSE(parseLogLevel("").has_value());
}

TEST(LoggerTest, LegacyDebugNamesMapToLevels) {
  EXPECT_EQ(parseLegacyDebugLevel("VERSION"), LogLevel::Warn);
  EXPECT_EQ(parseLegacyDebugLevel("WARN"), LogLevel::Warn);
  EXPECT_EQ(parseLegacyDebugLevel("INFO"), LogLevel::Info);
  EXPECT_EQ(parseLegacyDebugLevel("ABORT"), LogLevel::Error);
  EXPECT_EQ(parseLegacyDebugLevel("TRACE"), LogLevel::Debug);
  EXPECT_FALSE(parseLegacyDebugLevel("DEBUG").has_value());
}

TEST(LoggerTest, ParsesSubsystemLists) {
  EXPECT_EQ(parseLogSubsys("ALL"), kAllLogSubsys);
  EXPECT_EQ(parseLogSubsys("NET"), logSubsysBit(LogSubsys::NET));
  EXPECT_EQ(parseLogSubsys("net, conn"), logSubsysBit(LogSubsys::NET) | logSubsysBit(LogSubsys::CONN));
  EXPECT_EQ(parseLogSubsys("^ENV"), kAllLogSubsys & ~logSubsysBit(LogSubsys::ENV));
  EXPECT_EQ(parseLogSubsys("^ALL"), 0u);
}

TEST(LoggerTest, UnknownSubsystemsAreReportedAndIgnored) {
  std::string unknown;
  EXPECT_EQ(parseLogSubsys("NET,BOGUS,ALSOBAD", &unknown), logSubsysBit(LogSubsys::NET));
  EXPECT_EQ(unknown, "BOGUS,ALSOBAD");
}

TEST(LoggerTest, FiltersByLevel) {
  Logger logger({LogLevel::Warn, kAllLogSubsys, "", ""});
  EXPECT_FALSE(logger.enabled(LogLevel::Debug, LogSubsys::NET));
  EXPECT_FALSE(logger.enabled(LogLevel::Info, LogSubsys::NET));
  EXPECT_TRUE(logger.enabled(LogLevel::Warn, LogSubsys::NET));
  EXPECT_TRUE(logger.enabled(LogLevel::Error, LogSubsys::NET));
}

TEST(LoggerTest, FiltersBySubsystem) {
  Logger logger({LogLevel::Debug, logSubsysBit(LogSubsys::MEM), "", ""});
  EXPECT_TRUE(logger.enabled(LogLevel::Debug, LogSubsys::MEM));
  EXPECT_FALSE(logger.enabled(LogLevel::Error, LogSubsys::NET));
}

TEST(LoggerTest, LevelNoneSilencesEverything) {
  Logger logger({LogLevel::None, kAllLogSubsys, "", ""});
  EXPECT_FALSE(logger.enabled(LogLevel::Error, LogSubsys::GPU));
}

TEST(LoggerTest, ConfigDefaultsToErrorsOfAllSubsystems) {
  LogConfig config = configOf({});
  EXPECT_EQ(config.level, LogLevel::Error);
  EXPECT_EQ(config.subsysMask, kAllLogSubsys);
  EXPECT_EQ(config.filePath, "");
  EXPECT_EQ(config.problems, "");
}

TEST(LoggerTest, LogLevelVariableWinsOverLegacyDebug) {
  EXPECT_EQ(configOf({{"MSCCLPP_LOG_LEVEL", "WARN"}, {"MSCCLPP_DEBUG", "TRACE"}}).level, LogLevel::Warn);
  EXPECT_EQ(configOf({{"MSCCLPP_DEBUG", "INFO"}}).level, LogLevel::Info);
  EXPECT_EQ(configOf({{"MSCCLPP_DEBUG_SUBSYS", "NET"}}).subsysMask, logSubsysBit(LogSubsys::NET));
  EXPECT_EQ(configOf({{"MSCCLPP_LOG_SUBSYS", "CONN"}, {"MSCCLPP_DEBUG_SUBSYS", "NET"}}).subsysMask,
            logSubsysBit(LogSubsys::CONN));
  EXPECT_EQ(configOf({{"MSCCLPP_DEBUG_FILE", "/tmp/a"}}).filePath, "/tmp/a");
  EXPECT_EQ(configOf({{"MSCCLPP_LOG_FILE", "/tmp/b"}, {"MSCCLPP_DEBUG_FILE", "/tmp/a"}}).filePath, "/tmp/b");
}

TEST(LoggerTest, BadLevelKeepsDefaultAndIsReported) {
  LogConfig config = configOf({{"MSCCLPP_LOG_LEVEL", "LOUD"}});
  EXPECT_EQ(config.level, LogLevel::Error);
  EXPECT_NE(config.problems.find("MSCCLPP_LOG_LEVEL='LOUD'"), std::string::npos);
}

TEST(LoggerTest, LinesCarryLevelSubsystemPlaceAndTag) {
  Logger logger({LogLevel::Info, kAllLogSubsys, "", ""});
  std::vector<std::string> lines;
  logger.setSink([&](const std::string& line) { lines.push_back(line); });
  logger.setTag("rank 3");
  logger.write(LogLevel::Warn, LogSubsys::NET, "/a/b/bootstrap/socket.cc", 42, "peer vanished");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("[rank 3]"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(" WARN NET bootstrap/socket.cc:42 peer vanished"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(":" + std::to_string(getpid()) + ":"), std::string::npos) << lines[0];
}

TEST(LoggerTest, WritesToTheFileNamedWithPid) {
  std::string pattern = ::testing::TempDir() + "mscclpp_log_%p.txt";
  std::string path = ::testing::TempDir() + "mscclpp_log_" + std::to_string(getpid()) + ".txt";
  std::remove(path.c_str());
  {
    Logger logger({LogLevel::Info, kAllLogSubsys, pattern, ""});
    logger.write(LogLevel::Info, LogSubsys::ENV, __FILE__, __LINE__, "to the file");
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << path;
  EXPECT_NE(line.find("to the file"), std::string::npos);
  std::remove(path.c_str());
}

TEST(LoggerTest, UnopenableFileFallsBackToStderrAndSaysSo) {
  Logger logger({LogLevel::Info, kAllLogSubsys, "/nonexistent-dir/x/log.txt", ""});
  EXPECT_NE(logger.config().problems.find("cannot open log file"), std::string::npos);
}

TEST(LoggerTest, MacroDoesNotEvaluateArgumentsWhenFiltered) {
  // The process logger defaults to ERROR: a DEBUG statement must not build its message.
  if (logger().enabled(LogLevel::Debug, LogSubsys::NET)) GTEST_SKIP() << "DEBUG logging enabled in this environment";
  int evaluated = 0;
  auto expensive = [&]() {
    ++evaluated;
    return "x";
  };
  LOG_DEBUG(NET, "value ", expensive());
  EXPECT_EQ(evaluated, 0);
}
