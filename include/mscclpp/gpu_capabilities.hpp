// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_GPU_CAPABILITIES_HPP_
#define MSCCLPP_GPU_CAPABILITIES_HPP_

#include <cstddef>
#include <string>
#include <vector>

namespace mscclpp {

/// What one GPU offers for communication, read from the driver without creating a context.
struct DeviceCapabilities {
  int deviceId = -1;
  std::string name;
  int computeCapabilityMajor = 0;
  int computeCapabilityMinor = 0;
  std::string pciBusId;
  /// The GPU's NUMA node, or -1 when the platform does not say (virtual machines often do not).
  int numaNode = -1;
  /// cuMem* virtual memory management (needed for the pooled, fd-exportable allocations).
  bool virtualMemoryManagement = false;
  /// cuMem allocations can be exported as POSIX file descriptors.
  bool posixFdHandles = false;
  /// The device *advertises* fabric handles. Whether an allocation with them succeeds (it needs an
  /// IMEX channel) is a separate question: see fabricHandlesUsable().
  bool fabricHandlesAdvertised = false;
  /// The device advertises multicast objects (NVLS). See isNvlsSupported() for whether they are used.
  bool multicastAdvertised = false;
  /// Minimum cuMem allocation granularity for an exportable allocation on this device, 0 without VMM.
  size_t allocationGranularity = 0;
};

/// What this process can use, computed once on first call (thread-safe) and never failing: on a
/// machine without a GPU or driver `deviceCount` is 0 and `unavailableReason` says why.
struct GpuCapabilities {
  int driverVersion = 0;   // e.g. 13000; 0 when no driver is loaded
  int runtimeVersion = 0;  // the CUDA runtime this library was linked with
  int deviceCount = 0;
  std::string unavailableReason;
  std::vector<DeviceCapabilities> devices;

  bool gpuAvailable() const { return deviceCount > 0; }
  /// One line per fact, for logs and reports.
  std::string toString() const;
};

/// The process-wide capability probe.
const GpuCapabilities& gpuCapabilities();

/// Whether a cuMem allocation requesting fabric handles succeeds on `deviceId`: found by a trial
/// allocation of one granule on first call per device, then cached. False without a GPU.
bool fabricHandlesUsable(int deviceId);

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_CAPABILITIES_HPP_
