// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The helper extension `_ext` that MSCCL++'s python/test/test_mscclpp.py imports (`from ._cpp import _ext`),
// written with pybind11 instead of nanobind so that it shares the `_mscclpp` module's types: the
// RegisteredMemory and Semaphore objects the test passes in, and the FifoDeviceHandle it gets back.
// reference_tests.sh builds it into the prepared copy; it is the copy's only change.
//
// MyProxyService(rank, nranks, data_size, reg_mem_list, sem_list) runs a proxy whose every trigger sends
// this rank's slice of the data (data_size / nranks bytes at offset rank * slice) to every peer, signals
// the peer's semaphore and flushes, as the test's proxy kernel expects.

#include <pybind11/pybind11.h>

#include <mscclpp/core.hpp>
#include <mscclpp/fifo.hpp>
#include <mscclpp/proxy.hpp>
#include <mscclpp/semaphore.hpp>
#include <vector>

namespace py = pybind11;

namespace {

class MyProxyService {
 public:
  MyProxyService(int rank, int nranks, int dataSize, const py::list& registeredMemories, const py::list& semaphores)
      : rank_(rank),
        nranks_(nranks),
        dataSize_(dataSize),
        proxy_([this](mscclpp::ProxyTrigger) { return forwardSlice(); }) {
    for (const py::handle& memory : registeredMemories) memories_.push_back(memory.cast<mscclpp::RegisteredMemory>());
    // The host side of each semaphore: its signal() is what the kernel's Host2DeviceSemaphore waits for.
    for (const py::handle& semaphore : semaphores) {
      semaphores_.emplace_back(semaphore.cast<const mscclpp::Semaphore&>());
    }
  }

  void start() { proxy_.start(); }
  void stop() { proxy_.stop(); }
  mscclpp::FifoDeviceHandle fifoDeviceHandle() { return proxy_.fifo()->deviceHandle(); }

 private:
  mscclpp::ProxyHandlerResult forwardSlice() {
    uint64_t slice = static_cast<uint64_t>(dataSize_ / nranks_);
    uint64_t offset = static_cast<uint64_t>(rank_) * slice;
    for (int step = 1; step < nranks_; ++step) {
      int peer = (rank_ + step) % nranks_;
      mscclpp::Host2DeviceSemaphore& semaphore = semaphores_[peer];
      mscclpp::Connection& connection = semaphore.connection();
      connection.write(memories_[peer], offset, memories_[rank_], offset, slice);
      semaphore.signal();
      connection.flush();
    }
    return mscclpp::ProxyHandlerResult::Continue;
  }

  int rank_;
  int nranks_;
  int dataSize_;
  std::vector<mscclpp::RegisteredMemory> memories_;
  std::vector<mscclpp::Host2DeviceSemaphore> semaphores_;
  mscclpp::Proxy proxy_;
};

}  // namespace

PYBIND11_MODULE(_ext, m) {
  // stop() waits for the proxy thread to end; the GIL is released meanwhile, as the module's Proxy does.
  py::class_<MyProxyService>(m, "MyProxyService")
      .def(py::init<int, int, int, const py::list&, const py::list&>(), py::arg("rank"), py::arg("nranks"),
           py::arg("data_size"), py::arg("reg_mem_list"), py::arg("sem_list"))
      .def("fifo_device_handle", &MyProxyService::fifoDeviceHandle)
      .def("start", &MyProxyService::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &MyProxyService::stop, py::call_guard<py::gil_scoped_release>());
}
