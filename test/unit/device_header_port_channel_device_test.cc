// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/port_channel_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/port_channel_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, PortChannelDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::BasePortChannelDeviceHandle), 64u);
  EXPECT_EQ(sizeof(mscclpp::PortChannelDeviceHandle), 72u);
}
