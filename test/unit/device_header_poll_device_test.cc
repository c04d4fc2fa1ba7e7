// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/poll_device.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/poll_device.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, PollDeviceCompilesStandaloneOnTheHost) {
#if defined(POLL_MAYBE_JAILBREAK) || defined(OR_POLL_MAYBE_JAILBREAK)
  ADD_FAILURE() << "device spin loops must not exist in host compilation";
#endif
  SUCCEED();
}
