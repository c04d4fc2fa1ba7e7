// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_NUMA_HPP_
#define MSCCLPP_NUMA_HPP_

namespace mscclpp {

/// The NUMA node of GPU `deviceId` from sysfs, or -1 when the platform does not know it (a virtual
/// machine, a kernel without NUMA). Throws SysError when sysfs cannot be read at all.
int getDeviceNumaNode(int deviceId);

/// Binds the calling thread (CPUs and memory) to NUMA node `node`. -1 ("unknown") does nothing; a
/// node that does not exist throws Error(InvalidUsage).
void numaBind(int node);

}  // namespace mscclpp

#endif  // MSCCLPP_NUMA_HPP_
