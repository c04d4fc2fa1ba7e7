// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The collectives (include/mscclpp/collectives.hpp) on tensors: each call takes torch tensors, cupy arrays
// or any DLPack producer in GPU memory, reads count and element type from them (tensor_arg.hpp), and
// enqueues on the caller's stream with the GIL released, so a call may be captured into a CUDA graph as
// the C++ call may. Counts follow the C++ conventions; the checks here are those a tensor makes possible
// (matching types and element counts), the rest is the C++ layer's.

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <mscclpp/collectives.hpp>

#include "bindings.hpp"
#include "tensor_arg.hpp"

namespace mscclpp::python {

namespace {

using collectives::Algorithm;
using collectives::Collective;
using collectives::Collectives;
using collectives::Config;
using collectives::DataType;
using collectives::ReduceOp;
using Release = py::call_guard<py::gil_scoped_release>;

// The bits of `value` as one element of `type`, for a PreMulSum host scalar.
template <class T>
uint64_t bitsOf(T element) {
  uint64_t bits = 0;
  std::memcpy(&bits, &element, sizeof(T));
  return bits;
}

uint64_t scalarBits(double value, DataType type) {
  float single = static_cast<float>(value);
  switch (type) {
    case DataType::Int8:
      return bitsOf(static_cast<int8_t>(value));
    case DataType::Uint8:
      return bitsOf(static_cast<uint8_t>(value));
    case DataType::Int32:
      return bitsOf(static_cast<int32_t>(value));
    case DataType::Uint32:
      return bitsOf(static_cast<uint32_t>(value));
    case DataType::Int64:
      return bitsOf(static_cast<int64_t>(value));
    case DataType::Uint64:
      return bitsOf(static_cast<uint64_t>(value));
    case DataType::Float16:
      return bitsOf(__float2half(single));
    case DataType::Float32:
      return bitsOf(single);
    case DataType::Float64:
      return bitsOf(value);
    case DataType::Bfloat16:
      return bitsOf(__float2bfloat16(single));
#if defined(__FP8_TYPES_EXIST__)
    case DataType::Fp8E4M3:
      return bitsOf(__fp8_e4m3(single));
    case DataType::Fp8E5M2:
      return bitsOf(__fp8_e5m2(single));
#else
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
      throw Error("this build's toolkit has no FP8 types", ErrorCode::InvalidUsage);
#endif
  }
  throw Error("pre_mul_sum_host: unknown data type " + std::to_string(static_cast<int>(type)), ErrorCode::InvalidUsage);
}

// The tensors of one call, read with the GIL held; the C++ call that follows releases it.
struct Call {
  StreamArg stream;
  TensorArg send;
  TensorArg recv;
};

Call pairCall(const py::handle& send, const py::handle& recv, const py::handle& stream, const char* name) {
  StreamArg streamArgument = streamArg(stream, recv);
  TensorArg sendArgument = tensorArg(send, streamArgument, "send");
  TensorArg recvArgument = tensorArg(recv, streamArgument, "recv");
  Call call{streamArgument, sendArgument, recvArgument};
  if (call.send.type != call.recv.type) {
    throw Error(std::string(name) + ": send is " + collectives::dataTypeName(call.send.type) + ", recv is " +
                    collectives::dataTypeName(call.recv.type),
                ErrorCode::InvalidUsage);
  }
  return call;
}

void expectCount(const char* name, const char* which, size_t actual, size_t expected) {
  if (actual != expected) {
    throw Error(std::string(name) + ": " + which + " has " + std::to_string(actual) + " elements, expected " +
                    std::to_string(expected),
                ErrorCode::InvalidUsage);
  }
}

// count elements per rank for a buffer of nRanks * count elements.
size_t perRank(const char* name, const char* which, size_t total, int nRanks) {
  if (total % static_cast<size_t>(nRanks) != 0) {
    throw Error(std::string(name) + ": " + which + " has " + std::to_string(total) +
                    " elements, not a multiple of the " + std::to_string(nRanks) + " ranks",
                ErrorCode::InvalidUsage);
  }
  return total / static_cast<size_t>(nRanks);
}

void bindTypes(py::module_& m) {
  py::enum_<DataType>(m, "DataType")
      .value("int8", DataType::Int8)
      .value("uint8", DataType::Uint8)
      .value("int32", DataType::Int32)
      .value("uint32", DataType::Uint32)
      .value("int64", DataType::Int64)
      .value("uint64", DataType::Uint64)
      .value("float16", DataType::Float16)
      .value("float32", DataType::Float32)
      .value("float64", DataType::Float64)
      .value("bfloat16", DataType::Bfloat16)
      .value("float8_e4m3", DataType::Fp8E4M3)
      .value("float8_e5m2", DataType::Fp8E5M2);
  m.def("data_type_size", &collectives::dataTypeSize, py::arg("type"));

  py::class_<ReduceOp> reduceOp(m, "ReduceOp");
  py::enum_<ReduceOp::Kind>(reduceOp, "Kind")
      .value("Sum", ReduceOp::Kind::Sum)
      .value("Prod", ReduceOp::Kind::Prod)
      .value("Max", ReduceOp::Kind::Max)
      .value("Min", ReduceOp::Kind::Min)
      .value("Avg", ReduceOp::Kind::Avg)
      .value("PreMulSum", ReduceOp::Kind::PreMulSum);
  reduceOp.def(py::init<ReduceOp::Kind>(), py::arg("kind"))
      .def_readonly("kind", &ReduceOp::kind)
      .def_readonly("host_scalar_bits", &ReduceOp::hostScalarBits)
      .def_static(
          "pre_mul_sum_host",
          [](double scalar, DataType type) {
            uint64_t bits = scalarBits(scalar, type);
            return ReduceOp::preMulSumHost(&bits, type);
          },
          py::arg("scalar"), py::arg("type"))
      .def_static(
          "pre_mul_sum_device", [](uintptr_t scalar) { return ReduceOp::preMulSumDevice(toPointer(scalar)); },
          py::arg("device_scalar"))
      .def("__repr__",
           [](const ReduceOp& self) { return std::string("ReduceOp(") + collectives::reduceOpName(self.kind) + ")"; });
  py::implicitly_convertible<ReduceOp::Kind, ReduceOp>();

  py::enum_<Collective>(m, "Collective")
      .value("AllReduce", Collective::AllReduce)
      .value("AllGather", Collective::AllGather)
      .value("ReduceScatter", Collective::ReduceScatter)
      .value("Broadcast", Collective::Broadcast)
      .value("Reduce", Collective::Reduce)
      .value("AllToAll", Collective::AllToAll)
      .value("AllToAllv", Collective::AllToAllv)
      .value("Gather", Collective::Gather)
      .value("Scatter", Collective::Scatter)
      .value("SendRecv", Collective::SendRecv);

  py::enum_<Algorithm>(m, "Algorithm")
      .value("Auto", Algorithm::Auto)
      .value("LLOneShot", Algorithm::LLOneShot)
      .value("Staged", Algorithm::Staged)
      .value("ZeroCopy", Algorithm::ZeroCopy)
      .value("LLTwoShot", Algorithm::LLTwoShot)
      .value("CopyEngine", Algorithm::CopyEngine);

  py::class_<Config>(m, "Config")
      .def(py::init<>())
      .def_readwrite("scratch_bytes", &Config::scratchBytes)
      .def_readwrite("max_blocks", &Config::maxBlocks)
      .def_readwrite("ll_max_bytes", &Config::llMaxBytes)
      .def_readwrite("force_algorithm", &Config::forceAlgorithm)
      .def_readwrite("selector", &Config::selector)
      .def_readwrite("tuning_file", &Config::tuningFile);
}

void bindCollectiveCalls(py::class_<Collectives>& cls) {
  const auto sum = ReduceOp(ReduceOp::Kind::Sum);
  cls.def(
      "all_reduce",
      [](Collectives& self, py::handle send, py::handle recv, const ReduceOp& op, py::handle stream) {
        Call c = pairCall(send, recv, stream, "all_reduce");
        expectCount("all_reduce", "recv", c.recv.count, c.send.count);
        py::gil_scoped_release release;
        self.allReduce(c.send.data, c.recv.data, c.send.count, c.send.type, op, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("op") = sum, py::arg("stream") = py::none());
  cls.def(
      "all_gather",
      [](Collectives& self, py::handle send, py::handle recv, py::handle stream) {
        Call c = pairCall(send, recv, stream, "all_gather");
        expectCount("all_gather", "recv", c.recv.count, c.send.count * self.nRanks());
        py::gil_scoped_release release;
        self.allGather(c.send.data, c.recv.data, c.send.count, c.send.type, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("stream") = py::none());
  cls.def(
      "reduce_scatter",
      [](Collectives& self, py::handle send, py::handle recv, const ReduceOp& op, py::handle stream) {
        Call c = pairCall(send, recv, stream, "reduce_scatter");
        expectCount("reduce_scatter", "send", c.send.count, c.recv.count * self.nRanks());
        py::gil_scoped_release release;
        self.reduceScatter(c.send.data, c.recv.data, c.recv.count, c.recv.type, op, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("op") = sum, py::arg("stream") = py::none());
  cls.def(
      "broadcast",
      [](Collectives& self, py::handle send, py::handle recv, int root, py::handle stream) {
        Call c = pairCall(send, recv, stream, "broadcast");
        expectCount("broadcast", "send", c.send.count, c.recv.count);
        py::gil_scoped_release release;
        self.broadcast(c.send.data, c.recv.data, c.recv.count, c.recv.type, root, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("root"), py::arg("stream") = py::none());
  cls.def(
      "reduce",
      [](Collectives& self, py::handle send, py::handle recv, int root, const ReduceOp& op, py::handle stream) {
        Call c = pairCall(send, recv, stream, "reduce");
        // recv is written on the root only; elsewhere any tensor of the type will do.
        if (self.rank() == root) expectCount("reduce", "recv", c.recv.count, c.send.count);
        py::gil_scoped_release release;
        self.reduce(c.send.data, c.recv.data, c.send.count, c.send.type, op, root, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("root"), py::arg("op") = sum, py::arg("stream") = py::none());
  cls.def(
      "all_to_all",
      [](Collectives& self, py::handle send, py::handle recv, py::handle stream) {
        Call c = pairCall(send, recv, stream, "all_to_all");
        expectCount("all_to_all", "recv", c.recv.count, c.send.count);
        size_t count = perRank("all_to_all", "send", c.send.count, self.nRanks());
        py::gil_scoped_release release;
        self.allToAll(c.send.data, c.recv.data, count, c.send.type, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("stream") = py::none());
  cls.def(
      "all_to_allv",
      [](Collectives& self, py::handle send, const std::vector<size_t>& sendCounts,
         const std::vector<size_t>& sendDispls, py::handle recv, const std::vector<size_t>& recvCounts,
         const std::vector<size_t>& recvDispls, py::handle stream) {
        Call c = pairCall(send, recv, stream, "all_to_allv");
        py::gil_scoped_release release;
        self.allToAllv(c.send.data, sendCounts, sendDispls, c.recv.data, recvCounts, recvDispls, c.send.type,
                       c.stream.handle);
      },
      py::arg("send"), py::arg("send_counts"), py::arg("send_displs"), py::arg("recv"), py::arg("recv_counts"),
      py::arg("recv_displs"), py::arg("stream") = py::none());
  cls.def(
      "gather",
      [](Collectives& self, py::handle send, py::handle recv, int root, py::handle stream) {
        Call c = pairCall(send, recv, stream, "gather");
        if (self.rank() == root) expectCount("gather", "recv", c.recv.count, c.send.count * self.nRanks());
        py::gil_scoped_release release;
        self.gather(c.send.data, c.recv.data, c.send.count, c.send.type, root, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("root"), py::arg("stream") = py::none());
  cls.def(
      "scatter",
      [](Collectives& self, py::handle send, py::handle recv, int root, py::handle stream) {
        Call c = pairCall(send, recv, stream, "scatter");
        if (self.rank() == root) expectCount("scatter", "send", c.send.count, c.recv.count * self.nRanks());
        py::gil_scoped_release release;
        self.scatter(c.send.data, c.recv.data, c.recv.count, c.recv.type, root, c.stream.handle);
      },
      py::arg("send"), py::arg("recv"), py::arg("root"), py::arg("stream") = py::none());
}

void bindPointToPoint(py::class_<Collectives>& cls) {
  cls.def(
      "send",
      [](Collectives& self, py::handle tensor, int peer, py::handle stream) {
        StreamArg streamArgument = streamArg(stream, tensor);
        TensorArg t = tensorArg(tensor, streamArgument, "send");
        py::gil_scoped_release release;
        self.send(t.data, t.count, t.type, peer, streamArgument.handle);
      },
      py::arg("tensor"), py::arg("peer"), py::arg("stream") = py::none());
  cls.def(
      "recv",
      [](Collectives& self, py::handle tensor, int peer, py::handle stream) {
        StreamArg streamArgument = streamArg(stream, tensor);
        TensorArg t = tensorArg(tensor, streamArgument, "recv");
        py::gil_scoped_release release;
        self.recv(t.data, t.count, t.type, peer, streamArgument.handle);
      },
      py::arg("tensor"), py::arg("peer"), py::arg("stream") = py::none());
  cls.def("group_start", &Collectives::groupStart);
  cls.def("group_end", &Collectives::groupEnd, Release());
}

void bindRegistration(py::class_<Collectives>& cls) {
  // Collective, like the C++ calls: every rank registers its tensor of the same size, in the same order.
  cls.def(
      "register_buffer",
      [](Collectives& self, py::handle tensor) {
        StreamArg current = streamArg(py::none(), tensor);
        TensorArg t = tensorArg(tensor, current, "register_buffer");
        const size_t bytes = t.count * collectives::dataTypeSize(t.type);
        py::gil_scoped_release release;
        self.registerBuffer(t.data, bytes);
      },
      py::arg("tensor"));
  cls.def(
      "deregister_buffer",
      [](Collectives& self, py::handle tensor) {
        StreamArg current = streamArg(py::none(), tensor);
        TensorArg t = tensorArg(tensor, current, "deregister_buffer");
        py::gil_scoped_release release;
        self.deregisterBuffer(t.data);
      },
      py::arg("tensor"));
}

}  // namespace

void registerCollectives(py::module_& m) {
  py::module_ sub = m.def_submodule("collectives", "Collective operations on GPU tensors (collectives.hpp)");
  bindTypes(sub);
  // Construction connects every rank of the communicator to every other, so it waits for all of them.
  py::class_<Collectives> cls(sub, "Collectives");
  cls.def(py::init<std::shared_ptr<Communicator>, const Config&>(), py::arg("communicator"),
          py::arg("config") = Config(), Release())
      .def_property_readonly("rank", &Collectives::rank)
      .def_property_readonly("n_ranks", &Collectives::nRanks)
      .def_property_readonly("config", &Collectives::config, py::return_value_policy::copy)
      .def("algorithm_for", &Collectives::algorithmFor, py::arg("collective"), py::arg("bytes"),
           py::arg("registered") = false)
      .def_property_readonly("capture_mappings", &Collectives::captureMappings);
  bindCollectiveCalls(cls);
  bindPointToPoint(cls);
  bindRegistration(cls);
}

}  // namespace mscclpp::python
