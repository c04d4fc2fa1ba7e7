// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The byte size of a call's buffer (src/ext/common/call_bytes.hpp), which the collectives and the NCCL
// API check every count with: exact up to the limit, refused one element past it and wherever the
// product would wrap in 64 bits.

#include "ext/common/call_bytes.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using mscclpp::ext::callBytes;
using mscclpp::ext::kMaxCallBytes;

TEST(CallBytes, SizesUpToTheLimitAreExact) {
  uint64_t bytes = 1;
  EXPECT_TRUE(callBytes(0, 4, 4, bytes));
  EXPECT_EQ(bytes, 0u);
  EXPECT_TRUE(callBytes(1000, 3, 2, bytes));
  EXPECT_EQ(bytes, 6000u);
  EXPECT_TRUE(callBytes(kMaxCallBytes / 4, 1, 4, bytes));
  EXPECT_EQ(bytes, kMaxCallBytes);
  EXPECT_TRUE(callBytes(kMaxCallBytes / 64 / 8, 64, 8, bytes));
  EXPECT_EQ(bytes, kMaxCallBytes);
}

TEST(CallBytes, OneElementPastTheLimitIsRefusedAndLeavesBytesAlone) {
  uint64_t bytes = 7;
  EXPECT_FALSE(callBytes(kMaxCallBytes / 4 + 1, 1, 4, bytes));
  EXPECT_FALSE(callBytes(kMaxCallBytes / 64 / 8 + 1, 64, 8, bytes));
  // 3 x 2^56 / 3 rounds down: one more element of 3 parts is past the limit.
  EXPECT_FALSE(callBytes(kMaxCallBytes / 3 + 1, 3, 1, bytes));
  EXPECT_EQ(bytes, 7u);
}

TEST(CallBytes, CountsWhoseProductWrapsAreRefused) {
  uint64_t bytes = 0;
  // count x 4 is 2^64 + 4 - 2^64 = 4 after wrapping; count x 8 ranks x 4 wraps too.
  EXPECT_FALSE(callBytes(UINT64_MAX / 4 + 2, 1, 4, bytes));
  EXPECT_FALSE(callBytes(UINT64_MAX / 32 + 1, 8, 4, bytes));
  EXPECT_FALSE(callBytes(UINT64_MAX, UINT64_MAX, UINT64_MAX, bytes));
}

}  // namespace
