// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/semaphore.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;

}  // namespace

void registerSemaphores(py::module_& m) {
  py::class_<Host2DeviceSemaphore, std::shared_ptr<Host2DeviceSemaphore>> h2d(m, "Host2DeviceSemaphore");
  h2d.def(py::init<const Semaphore&>(), py::arg("semaphore"))
      .def(py::init<Communicator&, const Connection&>(), py::arg("communicator"), py::arg("connection"), Release())
      .def("connection", &Host2DeviceSemaphore::connection)
      .def("signal", &Host2DeviceSemaphore::signal)
      .def("device_handle", &Host2DeviceSemaphore::deviceHandle);
  py::class_<Host2DeviceSemaphoreDeviceHandle> h2dHandle(h2d, "DeviceHandle");
  h2dHandle.def(py::init([]() { return Host2DeviceSemaphoreDeviceHandle{}; }));
  defPointer(h2dHandle, "inbound_token", &Host2DeviceSemaphoreDeviceHandle::inboundToken);
  defPointer(h2dHandle, "expected_inbound_token", &Host2DeviceSemaphoreDeviceHandle::expectedInboundToken);
  defRaw(h2dHandle);
  m.attr("Host2DeviceSemaphoreDeviceHandle") = h2dHandle;

  py::class_<Host2HostSemaphore, std::shared_ptr<Host2HostSemaphore>>(m, "Host2HostSemaphore")
      .def(py::init<const Semaphore&>(), py::arg("semaphore"))
      .def(py::init<Communicator&, const Connection&>(), py::arg("communicator"), py::arg("connection"), Release())
      .def("connection", &Host2HostSemaphore::connection)
      .def("signal", &Host2HostSemaphore::signal, Release())
      .def("poll", &Host2HostSemaphore::poll)
      .def("wait", &Host2HostSemaphore::wait, py::arg("max_spin_count") = 10000000, Release());

  using D2D = MemoryDevice2DeviceSemaphore;
  py::class_<D2D, std::shared_ptr<D2D>> d2d(m, "MemoryDevice2DeviceSemaphore");
  d2d.def(py::init<const Semaphore&>(), py::arg("semaphore"))
      .def(py::init<Communicator&, const Connection&>(), py::arg("communicator"), py::arg("connection"), Release())
      .def("connection", &D2D::connection)
      .def("device_handle", &D2D::deviceHandle);
  using D2DHandle = MemoryDevice2DeviceSemaphoreDeviceHandle;
  py::class_<D2DHandle> d2dHandle(d2d, "DeviceHandle");
  d2dHandle.def(py::init([]() { return D2DHandle{}; }));
  defPointer(d2dHandle, "inbound_token", &D2DHandle::inboundToken);
  defPointer(d2dHandle, "outbound_token", &D2DHandle::outboundToken);
  defPointer(d2dHandle, "remote_inbound_token", &D2DHandle::remoteInboundToken);
  defPointer(d2dHandle, "expected_inbound_token", &D2DHandle::expectedInboundToken);
  defRaw(d2dHandle);
  m.attr("MemoryDevice2DeviceSemaphoreDeviceHandle") = d2dHandle;
}

}  // namespace mscclpp::python
