// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/copy_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/copy_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, CopyDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::LLPacket), 16u) << "copy_device.hpp brings the packet types it converts to";
}
