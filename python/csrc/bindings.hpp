// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Shared pieces of the `_mscclpp` extension: one register function per area (one source file each, split
// like the public headers), and the conventions every binding follows: pointers are Python ints, and every
// device handle exposes `.raw`, the bytes of the C++ struct, plus a readable and writable property per field.

#ifndef MSCCLPP_PYTHON_BINDINGS_HPP_
#define MSCCLPP_PYTHON_BINDINGS_HPP_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mscclpp::python {

namespace py = pybind11;

void registerErrors(py::module_& m);
void registerEnv(py::module_& m);
void registerCore(py::module_& m);
void registerFifo(py::module_& m);
void registerSemaphores(py::module_& m);
void registerMemoryChannels(py::module_& m);
void registerPortChannels(py::module_& m);
void registerGpuUtils(py::module_& m);
void registerNuma(py::module_& m);
void registerUtils(py::module_& m);
void registerExecutor(py::module_& m);
void registerCollectives(py::module_& m);
void registerBench(py::module_& m);

template <class T>
void* toPointer(T address) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

inline py::bytes toBytes(const std::vector<char>& data) { return py::bytes(data.data(), data.size()); }

inline std::vector<char> fromBytes(const py::bytes& data) {
  std::string_view view = data;
  return std::vector<char>(view.begin(), view.end());
}

/// `.raw` of a device handle: its exact bytes, readable, and writable with bytes of the same length.
template <class Handle, class... Options>
void defRaw(py::class_<Handle, Options...>& cls) {
  cls.def_property(
      "raw", [](const Handle& self) { return py::bytes(reinterpret_cast<const char*>(&self), sizeof(Handle)); },
      [](Handle& self, const py::bytes& raw) {
        std::string_view view = raw;
        if (view.size() != sizeof(Handle)) {
          throw py::value_error("raw needs " + std::to_string(sizeof(Handle)) + " bytes, got " +
                                std::to_string(view.size()));
        }
        std::memcpy(static_cast<void*>(&self), view.data(), sizeof(Handle));
      });
  cls.def_property_readonly_static("size_in_bytes", [](const py::object&) { return sizeof(Handle); });
}

/// A pointer field of a device handle as an int property.
template <class Handle, class Owner, class Pointee, class... Options>
void defPointer(py::class_<Handle, Options...>& cls, const char* name, Pointee* Owner::*member) {
  cls.def_property(
      name, [member](const Handle& self) { return reinterpret_cast<uintptr_t>(self.*member); },
      [member](Handle& self, uintptr_t value) { self.*member = reinterpret_cast<Pointee*>(value); });
}

}  // namespace mscclpp::python

#endif  // MSCCLPP_PYTHON_BINDINGS_HPP_
