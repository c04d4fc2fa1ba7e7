// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/semaphore_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/semaphore_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, SemaphoreDeviceCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::Host2DeviceSemaphoreDeviceHandle), 16u);
  EXPECT_EQ(sizeof(mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle), 32u);
}
