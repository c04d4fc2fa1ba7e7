// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/switch_channel_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/switch_channel_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, SwitchChannelDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::SwitchChannelDeviceHandle), 24u);
}
