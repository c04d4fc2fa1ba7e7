// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/memory_channel_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/memory_channel_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, MemoryChannelDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::BaseMemoryChannelDeviceHandle), 32u);
  EXPECT_EQ(sizeof(mscclpp::MemoryChannelDeviceHandle), 56u);
}
