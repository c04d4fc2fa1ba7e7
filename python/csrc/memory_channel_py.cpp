// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/memory_channel.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

void registerMemoryChannels(py::module_& m) {
  py::class_<BaseMemoryChannel>(m, "BaseMemoryChannel")
      .def(py::init<std::shared_ptr<MemoryDevice2DeviceSemaphore>>(), py::arg("semaphore"))
      .def(py::init<const Semaphore&>(), py::arg("semaphore"))
      .def("device_handle", &BaseMemoryChannel::deviceHandle);

  py::class_<MemoryChannel, BaseMemoryChannel>(m, "MemoryChannel")
      .def(py::init([](std::shared_ptr<MemoryDevice2DeviceSemaphore> semaphore, RegisteredMemory dst,
                       RegisteredMemory src, uintptr_t packetBuffer) {
             return MemoryChannel(std::move(semaphore), dst, src, toPointer(packetBuffer));
           }),
           py::arg("semaphore"), py::arg("dst"), py::arg("src"), py::arg("packet_buffer") = 0)
      .def(py::init([](const Semaphore& semaphore, RegisteredMemory dst, RegisteredMemory src, uintptr_t packetBuffer) {
             return MemoryChannel(semaphore, dst, src, toPointer(packetBuffer));
           }),
           py::arg("semaphore"), py::arg("dst"), py::arg("src"), py::arg("packet_buffer") = 0)
      .def("device_handle", &MemoryChannel::deviceHandle);

  py::class_<BaseMemoryChannelDeviceHandle> baseHandle(m, "BaseMemoryChannelDeviceHandle");
  baseHandle.def(py::init([]() { return BaseMemoryChannelDeviceHandle{}; }))
      .def_readwrite("semaphore_", &BaseMemoryChannelDeviceHandle::semaphore_);
  defRaw(baseHandle);

  py::class_<MemoryChannelDeviceHandle, BaseMemoryChannelDeviceHandle> handle(m, "MemoryChannelDeviceHandle");
  handle.def(py::init([]() { return MemoryChannelDeviceHandle{}; }));
  defPointer(handle, "dst_", &MemoryChannelDeviceHandle::dst_);
  defPointer(handle, "src_", &MemoryChannelDeviceHandle::src_);
  defPointer(handle, "packetBuffer_", &MemoryChannelDeviceHandle::packetBuffer_);
  defRaw(handle);
}

}  // namespace mscclpp::python
