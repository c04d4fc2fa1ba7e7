// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Included first, so this translation unit proves that <mscclpp/gpu_data_types.hpp> compiles on its own with a
// plain C++ compiler (host code includes the device headers for their struct layouts).
#include <mscclpp/gpu_data_types.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceHeaderTest, GpuDataTypesCompilesStandaloneOnTheHost) {
  EXPECT_EQ(sizeof(mscclpp::bf16x8), 16u);
  EXPECT_EQ(static_cast<int>(mscclpp::DataType::FP8_E5M2), 6);
}
