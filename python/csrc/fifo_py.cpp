// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <pybind11/functional.h>

#include <mscclpp/fifo.hpp>
#include <mscclpp/proxy.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

namespace {

// A Python callable shared with the proxy thread: every copy and the final release take the GIL, since the
// thread that drops the last reference may be the proxy's own.
class PythonHandler {
 public:
  explicit PythonHandler(py::function fn)
      : fn_(new py::function(std::move(fn)), [](py::function* f) {
          py::gil_scoped_acquire gil;
          delete f;
        }) {}

  ProxyHandlerResult operator()(ProxyTrigger trigger) const {
    py::gil_scoped_acquire gil;
    py::object result = (*fn_)(trigger);
    if (result.is_none()) return ProxyHandlerResult::Continue;
    return result.cast<ProxyHandlerResult>();
  }

 private:
  std::shared_ptr<py::function> fn_;
};

// Stopping a Proxy joins its thread, which may be waiting for the GIL inside a Python handler.
void deleteWithoutGil(Proxy* proxy) {
  if (PyGILState_Check()) {
    py::gil_scoped_release release;
    delete proxy;
  } else {
    delete proxy;
  }
}

}  // namespace

void registerFifo(py::module_& m) {
  m.attr("DEFAULT_FIFO_SIZE") = DEFAULT_FIFO_SIZE;
  m.attr("TriggerData") = TriggerData;
  m.attr("TriggerFlag") = TriggerFlag;
  m.attr("TriggerSync") = TriggerSync;

  py::class_<ProxyTrigger> trigger(m, "ProxyTrigger");
  trigger.def(py::init([]() { return ProxyTrigger{}; }))
      .def_property(
          "fst", [](const ProxyTrigger& self) { return self.fst; },
          [](ProxyTrigger& self, uint64_t value) { self.fst = value; })
      .def_property(
          "snd", [](const ProxyTrigger& self) { return self.snd; },
          [](ProxyTrigger& self, uint64_t value) { self.snd = value; });
  // The decoded bit fields, read-only: a request is made on the device, the host only reads it.
  trigger.def_property_readonly("size", [](const ProxyTrigger& self) { return uint64_t{self.fields.size}; })
      .def_property_readonly("src_offset", [](const ProxyTrigger& self) { return uint64_t{self.fields.srcOffset}; })
      .def_property_readonly("dst_offset", [](const ProxyTrigger& self) { return uint64_t{self.fields.dstOffset}; })
      .def_property_readonly("src_memory_id",
                             [](const ProxyTrigger& self) { return uint64_t{self.fields.srcMemoryId}; })
      .def_property_readonly("dst_memory_id",
                             [](const ProxyTrigger& self) { return uint64_t{self.fields.dstMemoryId}; })
      .def_property_readonly("type", [](const ProxyTrigger& self) { return uint64_t{self.fields.type}; })
      .def_property_readonly("semaphore_id",
                             [](const ProxyTrigger& self) { return uint64_t{self.fields.semaphoreId}; });
  defRaw(trigger);

  py::class_<FifoDeviceHandle> handle(m, "FifoDeviceHandle");
  handle.def(py::init([]() { return FifoDeviceHandle{}; }));
  defPointer(handle, "triggers", &FifoDeviceHandle::triggers);
  defPointer(handle, "head", &FifoDeviceHandle::head);
  defPointer(handle, "tail", &FifoDeviceHandle::tail);
  defPointer(handle, "tail_cache", &FifoDeviceHandle::tailCache);
  handle.def_readwrite("size", &FifoDeviceHandle::size);
  defRaw(handle);

  py::class_<Fifo, std::shared_ptr<Fifo>>(m, "Fifo")
      .def(py::init<int>(), py::arg("size") = DEFAULT_FIFO_SIZE)
      .def("poll", &Fifo::poll)
      .def("pop", &Fifo::pop)
      .def("size", &Fifo::size)
      .def("device_handle", &Fifo::deviceHandle);

  py::enum_<ProxyHandlerResult>(m, "ProxyHandlerResult")
      .value("Continue", ProxyHandlerResult::Continue)
      .value("Stop", ProxyHandlerResult::Stop);

  // A proxy whose handler is a Python callable (ProxyTrigger -> ProxyHandlerResult or None), called on
  // the proxy thread with the GIL held.
  py::class_<Proxy, std::shared_ptr<Proxy>>(m, "Proxy")
      .def(py::init([](py::function handler, int fifoSize) {
             return std::shared_ptr<Proxy>(new Proxy(PythonHandler(std::move(handler)), fifoSize), &deleteWithoutGil);
           }),
           py::arg("handler"), py::arg("fifo_size") = DEFAULT_FIFO_SIZE)
      .def("start", &Proxy::start, py::arg("blocking") = false, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Proxy::stop, py::call_guard<py::gil_scoped_release>())
      .def("fifo", &Proxy::fifo);
}

}  // namespace mscclpp::python
