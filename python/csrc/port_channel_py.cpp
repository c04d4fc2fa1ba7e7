// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/port_channel.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;

}  // namespace

void registerPortChannels(py::module_& m) {
  py::class_<BaseProxyService, std::shared_ptr<BaseProxyService>>(m, "BaseProxyService")
      .def("start_proxy", &BaseProxyService::startProxy, py::arg("blocking") = false, Release())
      .def("stop_proxy", &BaseProxyService::stopProxy, Release());

  py::class_<ProxyService, BaseProxyService, std::shared_ptr<ProxyService>>(m, "ProxyService")
      .def(py::init<int>(), py::arg("fifo_size") = DEFAULT_FIFO_SIZE)
      .def("start_proxy", &ProxyService::startProxy, py::arg("blocking") = false, Release())
      .def("stop_proxy", &ProxyService::stopProxy, Release())
      .def("build_and_add_semaphore", &ProxyService::buildAndAddSemaphore, py::arg("comm"), py::arg("connection"),
           Release())
      .def("add_semaphore", py::overload_cast<const Semaphore&>(&ProxyService::addSemaphore), py::arg("semaphore"))
      .def("add_semaphore", py::overload_cast<std::shared_ptr<Host2DeviceSemaphore>>(&ProxyService::addSemaphore),
           py::arg("semaphore"))
      .def("add_memory", &ProxyService::addMemory, py::arg("memory"))
      .def("next_memory_id", &ProxyService::nextMemoryId, py::arg("count") = 1)
      .def("semaphore", &ProxyService::semaphore, py::arg("id"))
      .def("base_port_channel", &ProxyService::basePortChannel, py::arg("id"))
      .def("port_channel", &ProxyService::portChannel, py::arg("id"), py::arg("dst"), py::arg("src"));

  py::class_<BasePortChannel>(m, "BasePortChannel")
      .def(py::init<SemaphoreId, std::shared_ptr<Host2DeviceSemaphore>, std::shared_ptr<Proxy>>(),
           py::arg("semaphore_id"), py::arg("semaphore"), py::arg("proxy"))
      .def(py::init<SemaphoreId, const Semaphore&, std::shared_ptr<Proxy>>(), py::arg("semaphore_id"),
           py::arg("semaphore"), py::arg("proxy"))
      .def("device_handle", &BasePortChannel::deviceHandle);

  py::class_<PortChannel, BasePortChannel>(m, "PortChannel")
      .def(py::init<SemaphoreId, std::shared_ptr<Host2DeviceSemaphore>, std::shared_ptr<Proxy>, MemoryId, MemoryId>(),
           py::arg("semaphore_id"), py::arg("semaphore"), py::arg("proxy"), py::arg("dst"), py::arg("src"))
      .def(py::init<SemaphoreId, const Semaphore&, std::shared_ptr<Proxy>, MemoryId, MemoryId>(),
           py::arg("semaphore_id"), py::arg("semaphore"), py::arg("proxy"), py::arg("dst"), py::arg("src"))
      .def("device_handle", &PortChannel::deviceHandle);

  py::class_<BasePortChannelDeviceHandle> baseHandle(m, "BasePortChannelDeviceHandle");
  baseHandle.def(py::init([]() { return BasePortChannelDeviceHandle{}; }))
      .def_readwrite("semaphore_id_", &BasePortChannelDeviceHandle::semaphoreId_)
      .def_readwrite("semaphore_", &BasePortChannelDeviceHandle::semaphore_)
      .def_readwrite("fifo_", &BasePortChannelDeviceHandle::fifo_);
  defRaw(baseHandle);

  py::class_<PortChannelDeviceHandle, BasePortChannelDeviceHandle> handle(m, "PortChannelDeviceHandle");
  handle.def(py::init([]() { return PortChannelDeviceHandle{}; }))
      .def_readwrite("dst_", &PortChannelDeviceHandle::dst_)
      .def_readwrite("src_", &PortChannelDeviceHandle::src_);
  defRaw(handle);
}

}  // namespace mscclpp::python
