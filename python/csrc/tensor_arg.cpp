// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "tensor_arg.hpp"

#include <mscclpp/gpu_utils.hpp>
#include <optional>
#include <string>

#include "dlpack.hpp"

namespace mscclpp::python {

namespace {

using collectives::DataType;

Error invalid(const char* what, const std::string& problem) {
  return Error(std::string(what) + ": " + problem, ErrorCode::InvalidUsage);
}

DataType collectivesType(const dlpack::DataType& dtype, const char* what) {
  if (dtype.lanes == 1) {
    switch (dtype.code) {
      case dlpack::kInt:
        if (dtype.bits == 8) return DataType::Int8;
        if (dtype.bits == 32) return DataType::Int32;
        if (dtype.bits == 64) return DataType::Int64;
        break;
      case dlpack::kUInt:
        if (dtype.bits == 8) return DataType::Uint8;
        if (dtype.bits == 32) return DataType::Uint32;
        if (dtype.bits == 64) return DataType::Uint64;
        break;
      case dlpack::kFloat:
        if (dtype.bits == 16) return DataType::Float16;
        if (dtype.bits == 32) return DataType::Float32;
        if (dtype.bits == 64) return DataType::Float64;
        break;
      case dlpack::kBfloat:
        if (dtype.bits == 16) return DataType::Bfloat16;
        break;
      case dlpack::kFloat8E4M3fn:
        if (dtype.bits == 8) return DataType::Fp8E4M3;
        break;
      case dlpack::kFloat8E5M2:
        if (dtype.bits == 8) return DataType::Fp8E5M2;
        break;
    }
  }
  throw invalid(what, "DLPack type (code " + std::to_string(dtype.code) + ", " + std::to_string(dtype.bits) +
                          " bits, " + std::to_string(dtype.lanes) + " lanes) is not a type collectives have");
}

// Elements of a row-major contiguous tensor; refuses any other layout (the kernels read count elements
// from the start) and counts that do not fit.
size_t contiguousCount(const dlpack::Tensor& tensor, const char* what) {
  uint64_t count = 1;
  for (int i = tensor.ndim - 1; i >= 0; --i) {
    int64_t extent = tensor.shape[i];
    if (extent < 0) throw invalid(what, "negative extent");
    if (tensor.strides != nullptr && extent > 1 && static_cast<uint64_t>(tensor.strides[i]) != count) {
      throw invalid(what, "the tensor is not contiguous (make it so with .contiguous() or cupy.ascontiguousarray)");
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(extent), &count)) {
      throw invalid(what, "the element count overflows 64 bits");
    }
  }
  return count;
}

// What __dlpack__ is told for a stream the caller named: 1 stands for the legacy default stream, since the
// protocol leaves 0 undefined for CUDA.
int64_t dlpackStreamOf(cudaStream_t stream) {
  return stream == nullptr ? 1 : static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
}

// A framework function looked up once and kept for the life of the process (a released object would
// outlive the interpreter at exit); null where the framework lacks it.
PyObject* frameworkFunction(const char* module, const char* name) {
  py::object function = py::getattr(py::module_::import(module), name, py::none());
  return function.is_none() ? nullptr : function.release().ptr();
}

int currentDevice() {
  int device = -1;
  MSCCLPP_CUDATHROW(cudaGetDevice(&device));
  return device;
}

// The current stream of the framework that made `tensor`. torch's raw-handle query returns the int
// directly (torch.cuda.current_stream() builds a Stream object, a few microseconds on every call); the
// public call stands in where a torch lacks it.
std::optional<cudaStream_t> currentStreamOf(const py::handle& tensor) {
  std::string module = py::str(py::type::handle_of(tensor).attr("__module__"));
  if (module.rfind("torch", 0) == 0) {
    static PyObject* rawStream = frameworkFunction("torch._C", "_cuda_getCurrentRawStream");
    static PyObject* currentStream = frameworkFunction("torch.cuda", "current_stream");
    if (rawStream != nullptr) {
      return reinterpret_cast<cudaStream_t>(
          py::reinterpret_borrow<py::object>(rawStream)(currentDevice()).cast<uintptr_t>());
    }
    py::object stream = py::reinterpret_borrow<py::object>(currentStream)();
    return reinterpret_cast<cudaStream_t>(stream.attr("cuda_stream").cast<uintptr_t>());
  }
  if (module.rfind("cupy", 0) == 0) {
    static PyObject* currentStream = frameworkFunction("cupy.cuda", "get_current_stream");
    py::object stream = py::reinterpret_borrow<py::object>(currentStream)();
    return reinterpret_cast<cudaStream_t>(stream.attr("ptr").cast<uintptr_t>());
  }
  return std::nullopt;
}

}  // namespace

StreamArg streamArg(const py::handle& stream, const py::handle& tensor) {
  if (stream.is_none()) {
    // The producer's own current stream needs no ordering with itself: -1 tells it not to synchronize.
    std::optional<cudaStream_t> current = currentStreamOf(tensor);
    if (current.has_value()) return {*current, -1};
    return {nullptr, dlpackStreamOf(nullptr)};
  }
  cudaStream_t handle;
  if (PyLong_Check(stream.ptr())) {
    handle = reinterpret_cast<cudaStream_t>(stream.cast<uintptr_t>());
  } else if (py::hasattr(stream, "cuda_stream")) {
    handle = reinterpret_cast<cudaStream_t>(stream.attr("cuda_stream").cast<uintptr_t>());
  } else if (py::hasattr(stream, "ptr")) {
    handle = reinterpret_cast<cudaStream_t>(stream.attr("ptr").cast<uintptr_t>());
  } else {
    throw Error("stream: expected an int, a torch.cuda.Stream, a cupy.cuda.Stream or None, got " +
                    std::string(py::str(py::type::handle_of(stream).attr("__name__"))),
                ErrorCode::InvalidUsage);
  }
  return {handle, dlpackStreamOf(handle)};
}

TensorArg tensorArg(const py::handle& tensor, const StreamArg& stream, const char* what) {
  if (!py::hasattr(tensor, "__dlpack_device__") || !py::hasattr(tensor, "__dlpack__")) {
    throw invalid(what, "expected a GPU tensor with __dlpack__ and __dlpack_device__ (torch, cupy), got " +
                            std::string(py::str(py::type::handle_of(tensor).attr("__name__"))));
  }
  auto device = tensor.attr("__dlpack_device__")().cast<std::pair<int, int>>();
  if (device.first != dlpack::kCUDA && device.first != dlpack::kCUDAManaged) {
    throw invalid(what, "the tensor is not in CUDA memory (DLPack device type " + std::to_string(device.first) + ")");
  }
  int current = currentDevice();
  if (device.first == dlpack::kCUDA && device.second != current) {
    throw invalid(what, "the tensor is on GPU " + std::to_string(device.second) + ", the current GPU is " +
                            std::to_string(current));
  }
  py::object capsule = tensor.attr("__dlpack__")(py::arg("stream") = stream.dlpackStream);
  // The capsule keeps its name, so the producer's destructor releases the tensor when it goes: we only read.
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();
  const dlpack::Tensor& view = managed->tensor;
  TensorArg arg;
  arg.type = collectivesType(view.dtype, what);
  arg.count = contiguousCount(view, what);
  arg.data = static_cast<char*>(view.data) + view.byteOffset;
  return arg;
}

}  // namespace mscclpp::python
