// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// TcpBootstrap's checks of what its caller asks for, before anything is allocated or connected.

#include <gtest/gtest.h>

#include <limits>
#include <mscclpp/core.hpp>
#include <string>

#include "bootstrap/tcp_bootstrap_impl.hpp"

using namespace mscclpp;

namespace {

std::string usageErrorOf(int rank, int nRanks) {
  try {
    TcpBootstrap bootstrap(rank, nRanks);
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TcpBootstrapArgsTest, ARankCountAboveTheLimitIsRefusedNamingItAndTheLimit) {
  const int absurd = std::numeric_limits<int>::max();
  const std::string message = usageErrorOf(0, absurd);
  ASSERT_NE(message, "") << "nRanks " << absurd << " was accepted";
  EXPECT_NE(message.find(std::to_string(absurd)), std::string::npos) << message;
  EXPECT_NE(message.find("limit of " + std::to_string(tcp_bootstrap::kMaxRanks)), std::string::npos) << message;
  EXPECT_NE(usageErrorOf(0, tcp_bootstrap::kMaxRanks + 1), "");
}

TEST(TcpBootstrapArgsTest, TheLimitItselfIsAccepted) {
  EXPECT_EQ(usageErrorOf(tcp_bootstrap::kMaxRanks - 1, tcp_bootstrap::kMaxRanks), "");
}

TEST(TcpBootstrapArgsTest, ANonPositiveRankCountIsRefused) {
  EXPECT_NE(usageErrorOf(0, 0), "");
  EXPECT_NE(usageErrorOf(0, -5), "");
}

TEST(TcpBootstrapArgsTest, ARankOutsideTheCountIsRefused) {
  EXPECT_NE(usageErrorOf(3, 3), "");
  EXPECT_NE(usageErrorOf(-1, 3), "");
}
