// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/packet_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/packet_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, PacketDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::LL16Packet), 16u);
  EXPECT_EQ(sizeof(mscclpp::LL8Packet), 8u);
}
