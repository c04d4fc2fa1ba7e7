// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <pybind11/stl.h>

#include <mscclpp/env.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

void registerEnv(py::module_& m) {
  py::class_<Env, std::shared_ptr<Env>>(m, "Env")
      .def_readonly("debug", &Env::debug)
      .def_readonly("debug_subsys", &Env::debugSubsys)
      .def_readonly("debug_file", &Env::debugFile)
      .def_readonly("log_level", &Env::logLevel)
      .def_readonly("log_subsys", &Env::logSubsys)
      .def_readonly("log_file", &Env::logFile)
      .def_readonly("hca_devices", &Env::hcaDevices)
      .def_readonly("ibv_so", &Env::ibvSo)
      .def_readonly("hostid", &Env::hostid)
      .def_readonly("socket_family", &Env::socketFamily)
      .def_readonly("socket_ifname", &Env::socketIfname)
      .def_readonly("comm_id", &Env::commId)
      .def_readonly("execution_plan_dir", &Env::executionPlanDir)
      .def_readonly("npkit_dump_dir", &Env::npkitDumpDir)
      .def_readonly("cuda_ipc_use_default_stream", &Env::cudaIpcUseDefaultStream)
      .def_readonly("nccl_shared_lib_path", &Env::ncclSharedLibPath)
      .def_readonly("force_nccl_fallback_operation", &Env::forceNcclFallbackOperation)
      .def_readonly("disable_channel_cache", &Env::disableChannelCache)
      .def_readonly("force_disable_nvls", &Env::forceDisableNvls)
      .def_readonly("ipc_handle_types", &Env::ipcHandleTypes)
      .def_readonly("bootstrap_timeout_sec", &Env::bootstrapTimeoutSec);
  m.def("env", &env);
}

}  // namespace mscclpp::python
