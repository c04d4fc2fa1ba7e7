// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/numa.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

void registerNuma(py::module_& m) {
  py::module_ numa = m.def_submodule("numa", "NUMA placement of GPUs and threads");
  numa.def("get_device_numa_node", &getDeviceNumaNode, py::arg("device_id"));
  numa.def("numa_bind", &numaBind, py::arg("node"));
}

}  // namespace mscclpp::python
