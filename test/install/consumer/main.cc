// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// A program built against an installed libmscclpp: it must load and run anywhere, GPU or not.

#include <cstdio>
#include <mscclpp/core.hpp>
#include <mscclpp/gpu_capabilities.hpp>

int main() {
  std::printf("libmscclpp %s (MSCCLPP_VERSION %d)\n", mscclpp::version().c_str(), MSCCLPP_VERSION);
  const mscclpp::GpuCapabilities& caps = mscclpp::gpuCapabilities();
  if (caps.gpuAvailable()) {
    std::printf("GPU: available, %d device(s)\n", caps.deviceCount);
  } else {
    std::printf("GPU: none (%s)\n", caps.unavailableReason.c_str());
  }
  return 0;
}
