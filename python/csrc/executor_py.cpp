// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The executor (include/mscclpp/executor.hpp) and the NpKit profiler interface, under the names and
// argument names of the MSCCL++ 0.8 Python module.

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <mscclpp/executor.hpp>
#include <mscclpp/npkit/npkit.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;

void bindPlanRegistry(py::module_& m) {
  // A request lives for the duration of a selector call only: its collective and hints are references
  // into the caller's frame, so a selector must read what it needs and not keep the object.
  py::class_<ExecutionRequest>(m, "ExecutionRequest")
      .def_readonly("world_size", &ExecutionRequest::worldSize)
      .def_readonly("n_ranks_per_node", &ExecutionRequest::nRanksPerNode)
      .def_readonly("rank", &ExecutionRequest::rank)
      .def_property_readonly("input_buffer",
                             [](const ExecutionRequest& self) { return reinterpret_cast<uintptr_t>(self.inputBuffer); })
      .def_property_readonly(
          "output_buffer", [](const ExecutionRequest& self) { return reinterpret_cast<uintptr_t>(self.outputBuffer); })
      .def_readonly("message_size", &ExecutionRequest::messageSize)
      .def_property_readonly("collective", [](const ExecutionRequest& self) { return self.collective; })
      .def_property_readonly("hints", [](const ExecutionRequest& self) { return self.hints; })
      .def("is_in_place", &ExecutionRequest::isInPlace);

  py::class_<ExecutionPlanHandle::Constraint>(m, "ExecutionPlanConstraint")
      .def_readonly("world_size", &ExecutionPlanHandle::Constraint::worldSize)
      .def_readonly("n_ranks_per_node", &ExecutionPlanHandle::Constraint::nRanksPerNode);

  py::class_<ExecutionPlanHandle, std::shared_ptr<ExecutionPlanHandle>>(m, "ExecutionPlanHandle")
      .def_readonly("id", &ExecutionPlanHandle::id)
      .def_readonly("constraint", &ExecutionPlanHandle::constraint)
      .def_readonly("plan", &ExecutionPlanHandle::plan)
      .def_readonly("tags", &ExecutionPlanHandle::tags)
      .def_static("create", &ExecutionPlanHandle::create, py::arg("id"), py::arg("world_size"),
                  py::arg("nranks_per_node"), py::arg("plan"),
                  py::arg("tags") = std::unordered_map<std::string, uint64_t>{});

  py::class_<ExecutionPlanRegistry, std::shared_ptr<ExecutionPlanRegistry>>(m, "ExecutionPlanRegistry")
      .def_static("get_instance", &ExecutionPlanRegistry::getInstance)
      .def("register_plan", &ExecutionPlanRegistry::registerPlan, py::arg("planHandle"))
      .def("get_plans", &ExecutionPlanRegistry::getPlans, py::arg("collective"))
      .def("get", &ExecutionPlanRegistry::get, py::arg("id"))
      .def("set_selector", &ExecutionPlanRegistry::setSelector, py::arg("selector"))
      .def("set_default_selector", &ExecutionPlanRegistry::setDefaultSelector, py::arg("selector"))
      .def("load_default_plans", &ExecutionPlanRegistry::loadDefaultPlans, py::arg("rank"), Release())
      .def("clear", &ExecutionPlanRegistry::clear);
}

void bindExecutor(py::module_& m) {
  py::enum_<DataType>(m, "DataType")
      .value("int32", DataType::INT32)
      .value("uint32", DataType::UINT32)
      .value("float16", DataType::FLOAT16)
      .value("float32", DataType::FLOAT32)
      .value("bfloat16", DataType::BFLOAT16)
      .value("float8_e4m3", DataType::FP8_E4M3)
      .value("float8_e5m2", DataType::FP8_E5M2);

  py::enum_<PacketType>(m, "PacketType").value("LL8", PacketType::LL8).value("LL16", PacketType::LL16);

  // The plan file is read and checked by the constructor (file I/O: the GIL is released).
  py::class_<ExecutionPlan, std::shared_ptr<ExecutionPlan>>(m, "ExecutionPlan")
      .def(py::init<const std::string&, int>(), py::arg("planPath"), py::arg("rank"), Release())
      .def_property_readonly("name", &ExecutionPlan::name)
      .def_property_readonly("collective", &ExecutionPlan::collective)
      .def_property_readonly("min_message_size", &ExecutionPlan::minMessageSize)
      .def_property_readonly("max_message_size", &ExecutionPlan::maxMessageSize)
      .def_property_readonly("is_in_place", &ExecutionPlan::isInPlace);

  // execute() connects to the plan's peers on the first call with given buffers, so it waits for them.
  py::class_<Executor>(m, "Executor")
      .def(py::init([](std::shared_ptr<Communicator> comm) { return std::make_unique<Executor>(std::move(comm)); }),
           py::arg("comm"))
      .def(
          "execute",
          [](Executor& self, int rank, uintptr_t sendBuff, uintptr_t recvBuff, size_t sendBuffSize, size_t recvBuffSize,
             DataType dataType, const ExecutionPlan& plan, uintptr_t stream, PacketType packetType) {
            self.execute(rank, toPointer(sendBuff), toPointer(recvBuff), sendBuffSize, recvBuffSize, dataType, plan,
                         reinterpret_cast<cudaStream_t>(stream), packetType);
          },
          py::arg("rank"), py::arg("send_buff"), py::arg("recv_buff"), py::arg("send_buff_size"),
          py::arg("recv_buff_size"), py::arg("data_type"), py::arg("plan"), py::arg("stream"),
          py::arg("packet_type") = PacketType::LL16, Release());
}

// libmscclpp records no NpKit events (include/mscclpp/npkit/npkit.hpp): init and dump log that no trace
// is written, shutdown does nothing, so code that profiles with NpKit runs unchanged.
void bindNpKit(py::module_& m) {
  py::module_ npkit = m.def_submodule("npkit", "NpKit profiler interface (this library records no events)");
  npkit.def("init", &NpKit::Init, py::arg("rank"));
  npkit.def("dump", &NpKit::Dump, py::arg("dump_dir"));
  npkit.def("shutdown", &NpKit::Shutdown);
}

}  // namespace

void registerExecutor(py::module_& m) {
  bindPlanRegistry(m);
  bindExecutor(m);
  bindNpKit(m);
}

}  // namespace mscclpp::python
