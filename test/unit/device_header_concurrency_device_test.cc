// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/concurrency_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/concurrency_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, ConcurrencyDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::DeviceSyncer), 16u);
  EXPECT_EQ(sizeof(mscclpp::DeviceSemaphore), 4u);
}
