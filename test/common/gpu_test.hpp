// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_GPU_TEST_HPP_
#define MSCCLPP_TEST_GPU_TEST_HPP_

#include <gtest/gtest.h>

#include <mscclpp/gpu_capabilities.hpp>

/// Skips the test (reported as skipped, with the reason) on a machine without a usable GPU.
#define MSCCLPP_REQUIRE_GPU()                                                            \
  do {                                                                                   \
    if (!::mscclpp::gpuCapabilities().gpuAvailable()) {                                  \
      GTEST_SKIP() << "needs a GPU: " << ::mscclpp::gpuCapabilities().unavailableReason; \
    }                                                                                    \
  } while (0)

#endif  // MSCCLPP_TEST_GPU_TEST_HPP_
