// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <numa.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <mscclpp/gpu.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/numa.hpp>

#include "common/checks.hpp"

namespace mscclpp {

int getDeviceNumaNode(int deviceId) {
  char busId[32] = {};
  MSCCLPP_CUDATHROW(cudaDeviceGetPCIBusId(busId, sizeof(busId), deviceId));
  std::string path = "/sys/bus/pci/devices/";
  for (const char* p = busId; *p; ++p) path += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  path += "/numa_node";
  std::ifstream in(path);
  if (!in) throw SysError(concat("cannot read the NUMA node of GPU ", deviceId, " from ", path), ENOENT);
  int node = -1;
  if (!(in >> node)) return -1;
  return node < 0 ? -1 : node;
}

void numaBind(int node) {
  if (node < 0) return;  // unknown: leave the thread where it is
  if (numa_available() < 0) {
    LOG_WARN(GPU, "NUMA is not available on this system; not binding to node ", node);
    return;
  }
  MSCCLPP_CHECK_USAGE(node <= numa_max_node(), "numaBind: node ", node, " does not exist (max ", numa_max_node(), ")");
  struct bitmask* mask = numa_allocate_nodemask();
  numa_bitmask_setbit(mask, static_cast<unsigned int>(node));
  numa_bind(mask);
  numa_bitmask_free(mask);
}

}  // namespace mscclpp
