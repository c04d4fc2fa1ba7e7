// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The kernel of overhead.py: it takes two channel handles by value, as user kernels do, and does next to
// nothing, so that a launch costs what the launch path costs.

#include <mscclpp/memory_channel_device.hpp>
#include <mscclpp/port_channel_device.hpp>

extern "C" __global__ void touch(mscclpp::MemoryChannelDeviceHandle memory, mscclpp::PortChannelDeviceHandle port,
                                 uint64_t* out) {
  if (out != nullptr && threadIdx.x == 0) *out = reinterpret_cast<uint64_t>(memory.dst_) + port.dst_;
}
