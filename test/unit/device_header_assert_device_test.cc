// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/assert_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/assert_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, AssertDeviceCompilesStandaloneOnTheHost) {
#if defined(MSCCLPP_ASSERT_DEVICE)
  ADD_FAILURE() << "device assertions must not exist in host compilation";
#endif
  SUCCEED();
}
