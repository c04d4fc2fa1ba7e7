// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/atomic_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/atomic_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, AtomicDeviceCompilesStandaloneOnTheHost) {
  uint32_t word = 7;
  EXPECT_EQ(mscclpp::atomicFetchAdd(&word, 1u, mscclpp::memoryOrderRelaxed), 7u);
  EXPECT_EQ(mscclpp::atomicLoad(&word, mscclpp::memoryOrderAcquire), 8u);
}
