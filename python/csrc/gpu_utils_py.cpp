// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <pybind11/stl.h>

#include <map>
#include <mscclpp/gpu_utils.hpp>

#include "bindings.hpp"
#include "dlpack.hpp"

namespace mscclpp::python {

namespace {

using RawGpuBuffer = GpuBuffer<char>;

// Accepts the reference's "torch.<name>" spellings and the plain names numpy, cupy and torch use.
dlpack::DataType dataTypeOf(const std::string& name) {
  static const std::map<std::string, dlpack::DataType> types = {
      {"float64", {dlpack::kFloat, 64, 1}}, {"float32", {dlpack::kFloat, 32, 1}},
      {"float16", {dlpack::kFloat, 16, 1}}, {"bfloat16", {dlpack::kBfloat, 16, 1}},
      {"int64", {dlpack::kInt, 64, 1}},     {"int32", {dlpack::kInt, 32, 1}},
      {"int16", {dlpack::kInt, 16, 1}},     {"int8", {dlpack::kInt, 8, 1}},
      {"uint64", {dlpack::kUInt, 64, 1}},   {"uint32", {dlpack::kUInt, 32, 1}},
      {"uint16", {dlpack::kUInt, 16, 1}},   {"uint8", {dlpack::kUInt, 8, 1}},
      {"bool", {dlpack::kBool, 8, 1}},
  };
  std::string key = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
  auto it = types.find(key);
  if (it == types.end()) throw Error("to_dlpack: unsupported data type '" + name + "'", ErrorCode::InvalidUsage);
  return it->second;
}

// Owns everything a ManagedTensor points to, and a reference to the buffer's memory.
struct DlpackContext {
  dlpack::ManagedTensor managed;
  std::shared_ptr<char> memory;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

void deleteManaged(dlpack::ManagedTensor* self) { delete static_cast<DlpackContext*>(self->managerCtx); }

// Bytes from the view's first element to the end of its last one, refusing negative extents and strides
// and any view whose size does not fit in 64 bits (a wrapped product would pass the size check below).
uint64_t viewBytes(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, uint64_t itemBytes) {
  auto overflow = [] { return Error("to_dlpack: the view's extent overflows 64 bits", ErrorCode::InvalidUsage); };
  uint64_t lastElement = 0;  // offset of the last element, in elements
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) throw Error("to_dlpack: negative extent", ErrorCode::InvalidUsage);
    if (strides[i] < 0) throw Error("to_dlpack: negative stride", ErrorCode::InvalidUsage);
    if (shape[i] == 0) return 0;
    uint64_t span;
    if (__builtin_mul_overflow(static_cast<uint64_t>(shape[i] - 1), static_cast<uint64_t>(strides[i]), &span) ||
        __builtin_add_overflow(lastElement, span, &lastElement)) {
      throw overflow();
    }
  }
  uint64_t bytes;
  if (__builtin_add_overflow(lastElement, uint64_t{1}, &lastElement) ||
      __builtin_mul_overflow(lastElement, itemBytes, &bytes) || bytes > static_cast<uint64_t>(INT64_MAX)) {
    throw overflow();
  }
  return bytes;
}

// Row-major strides (in elements) of a compact view of `shape`, checked like any other view afterwards.
std::vector<int64_t> compactStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  uint64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = static_cast<int64_t>(stride);
    if (shape[i] > 1 && (__builtin_mul_overflow(stride, static_cast<uint64_t>(shape[i]), &stride) ||
                         stride > static_cast<uint64_t>(INT64_MAX))) {
      throw Error("to_dlpack: the view's extent overflows 64 bits", ErrorCode::InvalidUsage);
    }
  }
  return strides;
}

py::capsule toDlpack(RawGpuBuffer& buffer, const std::string& dataType, std::vector<int64_t> shape,
                     std::vector<int64_t> strides) {
  dlpack::DataType dtype = dataTypeOf(dataType);
  size_t itemBytes = dtype.bits / 8;
  if (shape.empty()) shape.push_back(static_cast<int64_t>(buffer.nelems() / itemBytes));
  if (!strides.empty() && strides.size() != shape.size()) {
    throw Error("to_dlpack: strides and shape differ in length", ErrorCode::InvalidUsage);
  }
  uint64_t bytes = viewBytes(shape, strides.empty() ? compactStrides(shape) : strides, itemBytes);
  if (bytes > buffer.nelems()) {
    throw Error("to_dlpack: the view needs " + std::to_string(bytes) + " bytes, the buffer has " +
                    std::to_string(buffer.nelems()),
                ErrorCode::InvalidUsage);
  }
  auto* context = new DlpackContext{{}, buffer.memory(), std::move(shape), std::move(strides)};
  dlpack::Tensor& tensor = context->managed.tensor;
  tensor.data = buffer.data();
  tensor.device = {dlpack::kCUDA, buffer.deviceId()};
  tensor.ndim = static_cast<int32_t>(context->shape.size());
  tensor.dtype = dtype;
  tensor.shape = context->shape.data();
  tensor.strides = context->strides.empty() ? nullptr : context->strides.data();
  tensor.byteOffset = 0;
  context->managed.managerCtx = context;
  context->managed.deleter = &deleteManaged;
  // A consumer renames the capsule to "used_dltensor" and takes over the deleter; only an unconsumed
  // capsule frees the tensor itself.
  PyObject* capsule = PyCapsule_New(&context->managed, "dltensor", [](PyObject* self) {
    if (!PyCapsule_IsValid(self, "dltensor")) return;
    auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  });
  if (capsule == nullptr) {
    delete context;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

}  // namespace

void registerGpuUtils(py::module_& m) {
  m.def("is_nvls_supported", &isNvlsSupported);
  m.def(
      "is_cu_mem_map_allocated", [](uintptr_t ptr) { return isCuMemMapAllocated(toPointer(ptr)); }, py::arg("ptr"));
  m.def(
      "gpu_memset", [](uintptr_t ptr, int value, size_t bytes) { gpuMemset(toPointer(ptr), value, bytes); },
      py::arg("ptr"), py::arg("value"), py::arg("bytes"), py::call_guard<py::gil_scoped_release>());

  py::class_<RawGpuBuffer>(m, "RawGpuBuffer")
      .def(py::init<size_t>(), py::arg("nelems"))
      .def("nelems", &RawGpuBuffer::nelems)
      .def("bytes", &RawGpuBuffer::bytes)
      .def("data", [](RawGpuBuffer& self) { return reinterpret_cast<uintptr_t>(self.data()); })
      .def("device_id", &RawGpuBuffer::deviceId)
      .def("to_dlpack", &toDlpack, py::arg("data_type"), py::arg("shape") = std::vector<int64_t>(),
           py::arg("strides") = std::vector<int64_t>())
      .def_property_readonly("__cuda_array_interface__", [](RawGpuBuffer& self) {
        py::dict interface;
        interface["shape"] = py::make_tuple(self.nelems());
        interface["typestr"] = "|u1";
        interface["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(self.data()), false);
        interface["version"] = 3;
        return interface;
      });
}

}  // namespace mscclpp::python
