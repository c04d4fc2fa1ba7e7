// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The atomics of atomic_device.hpp in host code (the plain host compiler's branch of the header).
#include <gtest/gtest.h>

#include <cstdint>
#include <mscclpp/atomic_device.hpp>

TEST(AtomicHostTest, FetchAddReturnsTheWordBeforeTheAddition) {
  uint32_t word = 7;
  EXPECT_EQ(mscclpp::atomicFetchAdd(&word, 1u, mscclpp::memoryOrderRelaxed), 7u);
  EXPECT_EQ(word, 8u);
}

TEST(AtomicHostTest, LoadAndStoreSeeTheWord) {
  uint64_t word = 0;
  mscclpp::atomicStore(&word, uint64_t{42}, mscclpp::memoryOrderRelease);
  const uint64_t* constWord = &word;
  EXPECT_EQ(mscclpp::atomicLoad(constWord, mscclpp::memoryOrderAcquire), 42u);
}
