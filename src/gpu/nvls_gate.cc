// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "gpu/nvls_gate.hpp"

#include <mscclpp/env.hpp>
#include <mscclpp/gpu.hpp>
#include <mscclpp/gpu_capabilities.hpp>

#include "common/checks.hpp"

namespace mscclpp {
namespace {

bool currentDeviceAdvertisesMulticast() {
  const GpuCapabilities& caps = gpuCapabilities();
  if (!caps.gpuAvailable()) return false;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  for (const DeviceCapabilities& dev : caps.devices) {
    if (dev.deviceId == device) return dev.multicastAdvertised;
  }
  return false;
}

}  // namespace

std::string nvlsRefusalReason(bool multicastAdvertised, bool enableNvls) {
  if (!multicastAdvertised) return "the current GPU does not advertise multicast objects";
  if (!enableNvls) return "multicast objects are created only with MSCCLPP_ENABLE_NVLS=1";
  return "this build of libmscclpp has no multicast implementation";
}

void refuseNvls(const std::string& operation) {
  MSCCLPP_THROW(InvalidUsage, "NVLS is not supported (", operation,
                "): ", nvlsRefusalReason(currentDeviceAdvertisesMulticast(), env()->enableNvls));
}

}  // namespace mscclpp
