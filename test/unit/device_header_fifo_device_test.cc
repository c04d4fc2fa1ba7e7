// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/fifo_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/fifo_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, FifoDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::ProxyTrigger), 32u);
  EXPECT_EQ(sizeof(mscclpp::FifoDeviceHandle), 40u);
}
