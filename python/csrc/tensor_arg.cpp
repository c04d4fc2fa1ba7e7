// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "tensor_arg.hpp"

#include <functional>
#include <mscclpp/gpu_utils.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// A framework's object looked up once and kept for the life of the process (a released object would
// outlive the interpreter at exit); null where the framework lacks it.
PyObject* frameworkObject(const char* module, const char* name) {
  py::object object = py::getattr(py::module_::import(module), name, py::none());
  return object.is_none() ? nullptr : object.release().ptr();
}

// An attribute name as an interned string, made once (the lookups below run on every call).
PyObject* interned(const char* name) { return PyUnicode_InternFromString(name); }

int currentDevice() {
  int device = -1;
  MSCCLPP_CUDATHROW(cudaGetDevice(&device));
  return device;
}

// The framework a tensor's type belongs to, by the module that defines the type. A process meets a
// handful of types (torch.Tensor, torch.nn.Parameter, cupy.ndarray), so each is looked up by pointer and
// its module name read once; the type is kept alive so that its address is never another type's.
Framework frameworkOf(const py::handle& tensor) {
  static std::vector<std::pair<PyTypeObject*, Framework>> seen;  // the GIL serializes every use
  PyTypeObject* type = Py_TYPE(tensor.ptr());
  for (const auto& [known, framework] : seen) {
    if (known == type) return framework;
  }
  std::string module = py::str(py::type::handle_of(tensor).attr("__module__"));
  const Framework framework = module.rfind("torch", 0) == 0  ? Framework::Torch
                              : module.rfind("cupy", 0) == 0 ? Framework::Cupy
                                                             : Framework::Other;
  if (seen.size() < 64) {
    Py_INCREF(type);
    seen.emplace_back(type, framework);
  }
  return framework;
}

// The current stream of a framework. torch's raw-handle query returns the int directly
// (torch.cuda.current_stream() builds a Stream object, a few microseconds on every call); the public call
// stands in where a torch lacks it.
std::optional<cudaStream_t> currentStreamOf(Framework framework) {
  switch (framework) {
    case Framework::Torch: {
      static PyObject* rawStream = frameworkObject("torch._C", "_cuda_getCurrentRawStream");
      static PyObject* currentStream = frameworkObject("torch.cuda", "current_stream");
      if (rawStream != nullptr) {
        return reinterpret_cast<cudaStream_t>(
            py::reinterpret_borrow<py::object>(rawStream)(currentDevice()).cast<uintptr_t>());
      }
      py::object stream = py::reinterpret_borrow<py::object>(currentStream)();
      return reinterpret_cast<cudaStream_t>(stream.attr("cuda_stream").cast<uintptr_t>());
    }
    case Framework::Cupy: {
      static PyObject* currentStream = frameworkObject("cupy.cuda", "get_current_stream");
      py::object stream = py::reinterpret_borrow<py::object>(currentStream)();
      return reinterpret_cast<cudaStream_t>(stream.attr("ptr").cast<uintptr_t>());
    }
    case Framework::Other:
      break;
  }
  return std::nullopt;
}

// Work queued on `producer` comes before anything queued on `consumer` after this: an event per device
// and thread, recorded on the one and waited for on the other (what torch and cupy do for
// `__dlpack__(stream=consumer)`). The events live as long as the thread.
void orderAfter(cudaStream_t producer, cudaStream_t consumer) {
  struct Events {
    std::vector<cudaEvent_t> perDevice;
    ~Events() {
      for (cudaEvent_t e : perDevice) {
        if (e != nullptr) (void)cudaEventDestroy(e);  // at exit the runtime may be gone: nothing to report
      }
    }
  };
  thread_local Events events;
  const int device = currentDevice();
  if (events.perDevice.size() <= static_cast<size_t>(device)) events.perDevice.resize(device + 1, nullptr);
  cudaEvent_t& event = events.perDevice[device];
  if (event == nullptr) MSCCLPP_CUDATHROW(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  MSCCLPP_CUDATHROW(cudaEventRecord(event, producer));
  MSCCLPP_CUDATHROW(cudaStreamWaitEvent(consumer, event, 0));
}

// A new reference from the C API as an object; an error it raised is cleared (the callers below then take
// the general path, which reports what is wrong).
py::object owned(PyObject* result) {
  if (result == nullptr) {
    PyErr_Clear();
    return py::object();
  }
  return py::reinterpret_steal<py::object>(result);
}

// An unsigned integer of a Python int; nullopt for anything else.
std::optional<uint64_t> unsignedOf(const py::object& value) {
  if (!value || !PyLong_Check(value.ptr())) return std::nullopt;
  const unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  return v;
}

// The element type of a framework's dtype object, from a table made once: (dtype object, type) for each
// of `names` the framework has, looked up by identity (the dtypes of torch, and numpy's for cupy, are
// singletons).
using DtypeTable = std::vector<std::pair<PyObject*, DataType>>;

DtypeTable dtypeTable(const std::function<PyObject*(const char*)>& lookup) {
  static const std::pair<const char*, DataType> names[] = {
      {"int8", DataType::Int8},         {"uint8", DataType::Uint8},           {"int32", DataType::Int32},
      {"uint32", DataType::Uint32},     {"int64", DataType::Int64},           {"uint64", DataType::Uint64},
      {"float16", DataType::Float16},   {"float32", DataType::Float32},       {"float64", DataType::Float64},
      {"bfloat16", DataType::Bfloat16}, {"float8_e4m3fn", DataType::Fp8E4M3}, {"float8_e5m2", DataType::Fp8E5M2}};
  DtypeTable table;
  for (const auto& [name, type] : names) {
    if (PyObject* dtype = lookup(name)) table.emplace_back(dtype, type);
  }
  return table;
}

std::optional<DataType> typeIn(const DtypeTable& table, const py::object& dtype) {
  if (!dtype) return std::nullopt;
  for (const auto& [object, type] : table) {
    if (object == dtype.ptr()) return type;
  }
  return std::nullopt;
}

// A torch tensor on the current GPU, contiguous, of a type collectives have: five C-implemented calls.
// nullopt for anything else (CPU, another GPU, strided, complex...), which the general path explains.
std::optional<TensorArg> torchTensor(const py::handle& tensor) {
  static PyObject* getDevice = interned("get_device");
  static PyObject* dtypeName = interned("dtype");
  static PyObject* isContiguous = interned("is_contiguous");
  static PyObject* numel = interned("numel");
  static PyObject* dataPtr = interned("data_ptr");
  static const DtypeTable dtypes = dtypeTable([](const char* name) { return frameworkObject("torch", name); });
  PyObject* t = tensor.ptr();
  const py::object device = owned(PyObject_CallMethodObjArgs(t, getDevice, nullptr));
  if (!device || !PyLong_Check(device.ptr()) || PyLong_AsLong(device.ptr()) != currentDevice()) return std::nullopt;
  const std::optional<DataType> type = typeIn(dtypes, owned(PyObject_GetAttr(t, dtypeName)));
  if (!type) return std::nullopt;
  if (owned(PyObject_CallMethodObjArgs(t, isContiguous, nullptr)).ptr() != Py_True) return std::nullopt;
  const std::optional<uint64_t> count = unsignedOf(owned(PyObject_CallMethodObjArgs(t, numel, nullptr)));
  const std::optional<uint64_t> data = unsignedOf(owned(PyObject_CallMethodObjArgs(t, dataPtr, nullptr)));
  if (!count || !data) return std::nullopt;
  return TensorArg{reinterpret_cast<void*>(static_cast<uintptr_t>(*data)), static_cast<size_t>(*count), *type};
}

// A cupy array on the current GPU, C-contiguous, of a type collectives have (cupy has no bfloat16 or FP8):
// attribute reads of Cython properties. nullopt for anything else, as for torch.
std::optional<TensorArg> cupyArray(const py::handle& array) {
  static PyObject* deviceName = interned("device");
  static PyObject* idName = interned("id");
  static PyObject* dtypeName = interned("dtype");
  static PyObject* flagsName = interned("flags");
  static PyObject* cContiguous = interned("c_contiguous");
  static PyObject* sizeName = interned("size");
  static PyObject* dataName = interned("data");
  static PyObject* ptrName = interned("ptr");
  static const DtypeTable dtypes = dtypeTable([](const char* name) -> PyObject* {
    static PyObject* dtypeOf = frameworkObject("numpy", "dtype");
    PyObject* dtype = PyObject_CallFunction(dtypeOf, "s", name);
    if (dtype == nullptr) PyErr_Clear();  // a name this numpy lacks
    return dtype;
  });
  PyObject* a = array.ptr();
  const py::object device = owned(PyObject_GetAttr(a, deviceName));
  const std::optional<uint64_t> id = device ? unsignedOf(owned(PyObject_GetAttr(device.ptr(), idName))) : std::nullopt;
  if (!id || *id != static_cast<uint64_t>(currentDevice())) return std::nullopt;
  const std::optional<DataType> type = typeIn(dtypes, owned(PyObject_GetAttr(a, dtypeName)));
  if (!type) return std::nullopt;
  const py::object flags = owned(PyObject_GetAttr(a, flagsName));
  if (!flags || owned(PyObject_GetAttr(flags.ptr(), cContiguous)).ptr() != Py_True) return std::nullopt;
  const std::optional<uint64_t> count = unsignedOf(owned(PyObject_GetAttr(a, sizeName)));
  const py::object memory = owned(PyObject_GetAttr(a, dataName));
  const std::optional<uint64_t> data =
      memory ? unsignedOf(owned(PyObject_GetAttr(memory.ptr(), ptrName))) : std::nullopt;
  if (!count || !data) return std::nullopt;
  return TensorArg{reinterpret_cast<void*>(static_cast<uintptr_t>(*data)), static_cast<size_t>(*count), *type};
}

// Any DLPack producer. `dlpackStream` is what __dlpack__ is told: -1 for the producer's own current
// stream (nothing to order), else the stream that will use the tensor.
TensorArg dlpackTensor(const py::handle& tensor, int64_t dlpackStream, const char* what) {
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
  py::object capsule = tensor.attr("__dlpack__")(py::arg("stream") = dlpackStream);
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

}  // namespace

StreamArg streamArg(const py::handle& stream, const py::handle& tensor) {
  if (stream.is_none()) {
    const Framework framework = frameworkOf(tensor);
    std::optional<cudaStream_t> current = currentStreamOf(framework);
    if (current.has_value()) return {*current, framework};
    return {nullptr, Framework::Other};
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
  return {handle, Framework::Other};
}

TensorArg tensorArg(const py::handle& tensor, StreamArg& stream, const char* what) {
  const Framework framework = frameworkOf(tensor);
  // The stream is this tensor's framework's current one, or is already ordered after it: nothing to order.
  const bool ownStream = framework != Framework::Other && (framework == stream.current || framework == stream.ordered);
  std::optional<TensorArg> direct;
  if (framework == Framework::Torch) direct = torchTensor(tensor);
  if (framework == Framework::Cupy) direct = cupyArray(tensor);
  if (!direct) return dlpackTensor(tensor, ownStream ? -1 : dlpackStreamOf(stream.handle), what);
  if (!ownStream) {
    const std::optional<cudaStream_t> producer = currentStreamOf(framework);
    if (producer.has_value() && *producer != stream.handle) orderAfter(*producer, stream.handle);
    stream.ordered = framework;
  }
  return *direct;
}

}  // namespace mscclpp::python
