// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Binding a resolved plan to the buffers of one context: the per-block tables of device_plan.hpp, with
// every operand's address and proxy id filled in, laid out as the kernel copies them into shared
// memory. Host code only; the executor uploads the bytes.

#ifndef MSCCLPP_EXT_EXECUTOR_DEVICE_TABLES_HPP_
#define MSCCLPP_EXT_EXECUTOR_DEVICE_TABLES_HPP_

#include <cstdint>
#include <vector>

#include "ext/executor/device_plan.hpp"
#include "ext/executor/plan.hpp"

namespace mscclpp::executor {

/// Where one context's buffers are: as this GPU maps them and as the proxy knows them.
struct BufferAddresses {
  char* local[3];                   // input, output, scratch (by BufferType)
  MemoryId localIdBase;             // proxy ids of the local buffers: base + BufferType
  std::vector<char*> remote;        // per remote buffer: its mapping here, or null (port access only)
  std::vector<MemoryId> remoteIds;  // per remote buffer: its proxy id (0 where not reached by port)
  std::vector<BaseMemoryChannelDeviceHandle> memoryChannels;
  std::vector<BasePortChannelDeviceHandle> portChannels;
};

/// The tables of all blocks, `tableBytes` apart.
struct DeviceTables {
  std::vector<char> bytes;
  uint32_t tableBytes = 0;
};

/// Lays out the table of every thread block of `r` (DeviceTableHead), operands bound to `a`.
DeviceTables buildDeviceTables(const ResolvedPlan& r, const BufferAddresses& a);

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_DEVICE_TABLES_HPP_
