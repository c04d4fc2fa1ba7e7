// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <pybind11/stl.h>

#include <mscclpp/core.hpp>
#include <sstream>

#include "bindings.hpp"

// A class of its own (picklable, comparable), not the list of 128 ints stl.h would make of the std::array.
PYBIND11_MAKE_OPAQUE(mscclpp::UniqueId)

namespace mscclpp::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;

template <class T>
std::string toString(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// The bytes of a contiguous buffer (bytes, bytearray, memoryview, numpy array).
std::vector<char> bufferBytes(const py::buffer& data) {
  py::buffer_info info = data.request();
  const char* begin = static_cast<const char*>(info.ptr);
  return std::vector<char>(begin, begin + info.size * info.itemsize);
}

// Receives a length-prefixed message into `data`: a bytearray takes the message's length, any other
// writable buffer must have exactly that length.
void recvInto(Bootstrap& self, py::object data, int peer, int tag) {
  std::vector<char> message;
  {
    py::gil_scoped_release release;
    self.recv(message, peer, tag);
  }
  if (PyByteArray_Check(data.ptr())) {
    if (PyByteArray_Resize(data.ptr(), static_cast<Py_ssize_t>(message.size())) != 0) throw py::error_already_set();
    std::memcpy(PyByteArray_AsString(data.ptr()), message.data(), message.size());
    return;
  }
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(data).request(true);
  size_t capacity = static_cast<size_t>(info.size * info.itemsize);
  if (capacity != message.size()) {
    throw Error("recv: the message from rank " + std::to_string(peer) + " has " + std::to_string(message.size()) +
                    " bytes but the buffer has " + std::to_string(capacity),
                ErrorCode::InvalidUsage);
  }
  std::memcpy(info.ptr, message.data(), message.size());
}

void bindBootstrap(py::module_& m) {
  py::class_<Bootstrap, std::shared_ptr<Bootstrap>>(m, "Bootstrap")
      .def("get_rank", &Bootstrap::getRank)
      .def("get_n_ranks", &Bootstrap::getNranks)
      .def("get_n_ranks_per_node", &Bootstrap::getNranksPerNode)
      .def(
          "send",
          [](Bootstrap& self, uintptr_t data, int size, int peer, int tag) {
            self.send(toPointer(data), size, peer, tag);
          },
          py::arg("data"), py::arg("size"), py::arg("peer"), py::arg("tag"), Release())
      .def(
          "recv",
          [](Bootstrap& self, uintptr_t data, int size, int peer, int tag) {
            self.recv(toPointer(data), size, peer, tag);
          },
          py::arg("data"), py::arg("size"), py::arg("peer"), py::arg("tag"), Release())
      .def(
          "send",
          [](Bootstrap& self, const py::buffer& data, int peer, int tag) {
            std::vector<char> bytes = bufferBytes(data);
            py::gil_scoped_release release;
            self.send(bytes, peer, tag);
          },
          py::arg("data"), py::arg("peer"), py::arg("tag"))
      .def("recv", &recvInto, py::arg("data"), py::arg("peer"), py::arg("tag"))
      .def(
          "all_gather", [](Bootstrap& self, uintptr_t allData, int size) { self.allGather(toPointer(allData), size); },
          py::arg("all_data"), py::arg("size"), Release())
      .def(
          "all_gather",
          [](Bootstrap& self, const py::buffer& allData, int size) {
            py::buffer_info info = allData.request(true);
            if (static_cast<int64_t>(info.size * info.itemsize) < static_cast<int64_t>(size) * self.getNranks()) {
              throw Error("all_gather: the buffer is smaller than size * n_ranks", ErrorCode::InvalidUsage);
            }
            py::gil_scoped_release release;
            self.allGather(info.ptr, size);
          },
          py::arg("all_data"), py::arg("size"))
      .def("barrier", &Bootstrap::barrier, Release())
      .def("group_barrier", &Bootstrap::groupBarrier, py::arg("ranks"), Release());

  py::class_<UniqueId>(m, "UniqueId")
      .def(py::init<>())
      .def(py::init([](const py::bytes& data) {
             std::string_view view = data;
             if (view.size() != UniqueIdBytes) {
               throw Error("UniqueId needs " + std::to_string(UniqueIdBytes) + " bytes", ErrorCode::InvalidUsage);
             }
             UniqueId id;
             std::memcpy(id.data(), view.data(), UniqueIdBytes);
             return id;
           }),
           py::arg("data"))
      .def("__bytes__",
           [](const UniqueId& self) { return py::bytes(reinterpret_cast<const char*>(self.data()), self.size()); })
      .def("__eq__", [](const UniqueId& a, const UniqueId& b) { return a == b; })
      .def("__hash__",
           [](const UniqueId& self) {
             return py::hash(py::bytes(reinterpret_cast<const char*>(self.data()), self.size()));
           })
      // Picklable, so that mpi4py's bcast carries it from rank 0 to the others.
      .def(py::pickle(
          [](const UniqueId& self) {
            return py::make_tuple(py::bytes(reinterpret_cast<const char*>(self.data()), self.size()));
          },
          [](const py::tuple& state) {
            std::string data = state[0].cast<std::string>();
            if (data.size() != UniqueIdBytes) throw Error("bad UniqueId state", ErrorCode::InvalidUsage);
            UniqueId id;
            std::memcpy(id.data(), data.data(), UniqueIdBytes);
            return id;
          }));

  py::class_<TcpBootstrap, Bootstrap, std::shared_ptr<TcpBootstrap>>(m, "TcpBootstrap")
      .def(py::init<int, int>(), py::arg("rank"), py::arg("n_ranks"))
      .def_static(
          "create", [](int rank, int nRanks) { return std::make_shared<TcpBootstrap>(rank, nRanks); }, py::arg("rank"),
          py::arg("n_ranks"))
      .def_static("create_unique_id", &TcpBootstrap::createUniqueId)
      .def("get_unique_id", &TcpBootstrap::getUniqueId)
      .def("initialize", py::overload_cast<UniqueId, int64_t>(&TcpBootstrap::initialize), py::arg("unique_id"),
           py::arg("timeout_sec") = 30, Release())
      .def("initialize", py::overload_cast<const std::string&, int64_t>(&TcpBootstrap::initialize),
           py::arg("if_ip_port_trio"), py::arg("timeout_sec") = 30, Release())
      .def(
          "broadcast",
          [](TcpBootstrap& self, uintptr_t data, int size, int root) { self.broadcast(toPointer(data), size, root); },
          py::arg("data"), py::arg("size"), py::arg("root"), Release());
}

void bindTransports(py::module_& m) {
  py::enum_<Transport> transport(m, "Transport");
  transport.value("Unknown", Transport::Unknown)
      .value("CudaIpc", Transport::CudaIpc)
      .value("IB0", Transport::IB0)
      .value("IB1", Transport::IB1)
      .value("IB2", Transport::IB2)
      .value("IB3", Transport::IB3)
      .value("IB4", Transport::IB4)
      .value("IB5", Transport::IB5)
      .value("IB6", Transport::IB6)
      .value("IB7", Transport::IB7)
      .value("Ethernet", Transport::Ethernet)
      .value("NumTransports", Transport::NumTransports);

  py::class_<TransportFlags> flags(m, "TransportFlags");
  flags
      .def(py::init<>())
      // A Transport made from an int that names no transport is refused by the C++ constructor.
      .def(py::init<Transport>(), py::arg("transport"))
      .def("has", &TransportFlags::has, py::arg("transport"))
      .def("none", &TransportFlags::none)
      .def("any", &TransportFlags::any)
      .def("all", &TransportFlags::all)
      .def("count", &TransportFlags::count)
      .def(
          "__or__", [](const TransportFlags& a, const TransportFlags& b) { return a | b; }, py::is_operator())
      .def(
          "__and__", [](const TransportFlags& a, const TransportFlags& b) { return a & b; }, py::is_operator())
      .def(
          "__xor__", [](const TransportFlags& a, const TransportFlags& b) { return a ^ b; }, py::is_operator())
      .def(
          "__ior__", [](TransportFlags& a, const TransportFlags& b) { return a |= b; }, py::is_operator())
      .def(
          "__iand__", [](TransportFlags& a, const TransportFlags& b) { return a &= b; }, py::is_operator())
      .def(
          "__ixor__", [](TransportFlags& a, const TransportFlags& b) { return a ^= b; }, py::is_operator())
      .def("__invert__", [](const TransportFlags& a) { return ~a; })
      .def(
          "__eq__", [](const TransportFlags& a, const TransportFlags& b) { return a == b; }, py::is_operator())
      .def(
          "__ne__", [](const TransportFlags& a, const TransportFlags& b) { return a != b; }, py::is_operator())
      .def("__hash__", [](const TransportFlags& a) { return std::hash<TransportFlags>()(a); })
      .def("__bool__", &TransportFlags::any)
      .def("__repr__", [](const TransportFlags& self) {
        std::string names;
        for (int t = 0; t < static_cast<int>(Transport::NumTransports); ++t) {
          if (!self.has(static_cast<Transport>(t))) continue;
          if (!names.empty()) names += " | ";
          names += toString(static_cast<Transport>(t));
        }
        return "TransportFlags(" + names + ")";
      });
  py::implicitly_convertible<Transport, TransportFlags>();
  // Transport op Transport (or TransportFlags) gives TransportFlags, as in C++.
  transport
      .def(
          "__or__", [](Transport a, const TransportFlags& b) { return TransportFlags(a) | b; }, py::is_operator())
      .def(
          "__and__", [](Transport a, const TransportFlags& b) { return TransportFlags(a) & b; }, py::is_operator())
      .def(
          "__xor__", [](Transport a, const TransportFlags& b) { return TransportFlags(a) ^ b; }, py::is_operator());
  m.attr("NoTransports") = NoTransports;
  m.attr("AllIBTransports") = AllIBTransports;
  m.attr("AllTransports") = AllTransports;

  py::enum_<DeviceType>(m, "DeviceType")
      .value("Unknown", DeviceType::Unknown)
      .value("CPU", DeviceType::CPU)
      .value("GPU", DeviceType::GPU);

  py::class_<Device>(m, "Device")
      .def(py::init<>())
      .def(py::init<DeviceType, int>(), py::arg("type"), py::arg("id") = -1)
      .def_readwrite("type", &Device::type)
      .def_readwrite("id", &Device::id)
      .def("__str__", &toString<Device>)
      .def("__repr__", [](const Device& self) { return "Device(" + toString(self) + ")"; });
  py::implicitly_convertible<DeviceType, Device>();
}

void bindEndpoints(py::module_& m) {
  using Ib = EndpointConfig::Ib;
  py::class_<Ib>(m, "EndpointConfigIb")
      .def(py::init<int, int, int, int, int, int, int>(), py::arg("device_index") = -1,
           py::arg("port") = Ib::DefaultPort, py::arg("gid_index") = Ib::DefaultGidIndex,
           py::arg("max_cq_size") = Ib::DefaultMaxCqSize, py::arg("max_cq_poll_num") = Ib::DefaultMaxCqPollNum,
           py::arg("max_send_wr") = Ib::DefaultMaxSendWr, py::arg("max_wr_per_send") = Ib::DefaultMaxWrPerSend)
      .def_readwrite("device_index", &Ib::deviceIndex)
      .def_readwrite("port", &Ib::port)
      .def_readwrite("gid_index", &Ib::gidIndex)
      .def_readwrite("max_cq_size", &Ib::maxCqSize)
      .def_readwrite("max_cq_poll_num", &Ib::maxCqPollNum)
      .def_readwrite("max_send_wr", &Ib::maxSendWr)
      .def_readwrite("max_wr_per_send", &Ib::maxWrPerSend);

  py::class_<EndpointConfig> config(m, "EndpointConfig");
  config.def(py::init<>())
      .def(py::init<Transport>(), py::arg("transport"))
      .def(py::init<Transport, Device, int, Ib>(), py::arg("transport"), py::arg("device"),
           py::arg("max_write_queue_size") = -1, py::arg("ib") = Ib())
      .def_readwrite("transport", &EndpointConfig::transport)
      .def_readwrite("device", &EndpointConfig::device)
      .def_readwrite("ib", &EndpointConfig::ib)
      .def_readwrite("max_write_queue_size", &EndpointConfig::maxWriteQueueSize);
  // The IB settings also as flat properties, as the reference's module has them.
  auto ibField = [&config](const char* name, int Ib::*member) {
    config.def_property(
        name, [member](const EndpointConfig& self) { return self.ib.*member; },
        [member](EndpointConfig& self, int value) { self.ib.*member = value; });
  };
  ibField("ib_device_index", &Ib::deviceIndex);
  ibField("ib_port", &Ib::port);
  ibField("ib_gid_index", &Ib::gidIndex);
  ibField("ib_max_cq_size", &Ib::maxCqSize);
  ibField("ib_max_cq_poll_num", &Ib::maxCqPollNum);
  ibField("ib_max_send_wr", &Ib::maxSendWr);
  ibField("ib_max_wr_per_send", &Ib::maxWrPerSend);
  py::implicitly_convertible<Transport, EndpointConfig>();

  py::class_<Endpoint>(m, "Endpoint")
      .def("config", &Endpoint::config)
      .def("transport", &Endpoint::transport)
      .def("device", &Endpoint::device)
      .def("host_hash", &Endpoint::hostHash)
      .def("pid_hash", &Endpoint::pidHash)
      .def("max_write_queue_size", &Endpoint::maxWriteQueueSize)
      .def("serialize", [](const Endpoint& self) { return toBytes(self.serialize()); })
      .def_static(
          "deserialize", [](const py::bytes& data) { return Endpoint::deserialize(fromBytes(data)); }, py::arg("data"));
}

void bindMemoryAndConnections(py::module_& m) {
  py::class_<RegisteredMemory>(m, "RegisteredMemory")
      .def(py::init<>())
      .def("data", [](const RegisteredMemory& self) { return reinterpret_cast<uintptr_t>(self.data()); })
      .def("original_data_ptr",
           [](const RegisteredMemory& self) { return reinterpret_cast<uintptr_t>(self.originalDataPtr()); })
      .def("size", &RegisteredMemory::size)
      .def("transports", &RegisteredMemory::transports)
      .def("serialize", [](const RegisteredMemory& self) { return toBytes(self.serialize()); })
      .def_static(
          "deserialize", [](const py::bytes& data) { return RegisteredMemory::deserialize(fromBytes(data)); },
          py::arg("data"));

  py::class_<Connection>(m, "Connection")
      .def("write", &Connection::write, py::arg("dst"), py::arg("dst_offset"), py::arg("src"), py::arg("src_offset"),
           py::arg("size"))
      .def(
          "update_and_sync",
          [](Connection& self, RegisteredMemory dst, uint64_t dstOffset, uintptr_t src, uint64_t newValue) {
            self.updateAndSync(dst, dstOffset, static_cast<uint64_t*>(toPointer(src)), newValue);
          },
          py::arg("dst"), py::arg("dst_offset"), py::arg("src"), py::arg("new_value"))
      .def("flush", &Connection::flush, py::arg("timeout_usec") = static_cast<int64_t>(3e7), Release())
      .def("transport", &Connection::transport)
      .def("remote_transport", &Connection::remoteTransport)
      .def("context", &Connection::context)
      .def("local_device", &Connection::localDevice)
      .def("get_max_write_queue_size", &Connection::getMaxWriteQueueSize);

  py::class_<ContextMemoryUsage>(m, "ContextMemoryUsage")
      .def_readonly("device_bytes", &ContextMemoryUsage::deviceBytes)
      .def_readonly("host_pinned_bytes", &ContextMemoryUsage::hostPinnedBytes)
      .def_readonly("exported_handles", &ContextMemoryUsage::exportedHandles)
      .def_readonly("token_pool_chunks", &ContextMemoryUsage::tokenPoolChunks)
      .def_readonly("token_pool_capacity", &ContextMemoryUsage::tokenPoolCapacity)
      .def_readonly("tokens_in_use", &ContextMemoryUsage::tokensInUse);

  py::class_<Context, std::shared_ptr<Context>>(m, "Context")
      .def_static("create", &Context::create)
      .def(
          "register_memory",
          [](Context& self, uintptr_t ptr, size_t size, TransportFlags transports) {
            return self.registerMemory(toPointer(ptr), size, transports);
          },
          py::arg("ptr"), py::arg("size"), py::arg("transports"))
      .def("create_endpoint", &Context::createEndpoint, py::arg("config"))
      .def("connect", &Context::connect, py::arg("local_endpoint"), py::arg("remote_endpoint"), Release())
      .def("memory_usage", &Context::memoryUsage);

  py::class_<SemaphoreStub>(m, "SemaphoreStub")
      .def(py::init<const Connection&>(), py::arg("connection"))
      .def("memory", &SemaphoreStub::memory)
      .def("serialize", [](const SemaphoreStub& self) { return toBytes(self.serialize()); })
      .def_static(
          "deserialize", [](const py::bytes& data) { return SemaphoreStub::deserialize(fromBytes(data)); },
          py::arg("data"));

  py::class_<Semaphore>(m, "Semaphore")
      .def(py::init<>())
      .def(py::init<const SemaphoreStub&, const SemaphoreStub&>(), py::arg("local_stub"), py::arg("remote_stub"))
      .def("connection", &Semaphore::connection)
      .def("local_memory", &Semaphore::localMemory)
      .def("remote_memory", &Semaphore::remoteMemory);
}

// get() does the receive's work (it may wait for the peer), so it releases the GIL.
template <class T>
void bindFuture(py::module_& m, const char* name) {
  py::class_<std::shared_future<T>>(m, name)
      .def("get", &std::shared_future<T>::get, Release())
      .def("valid", &std::shared_future<T>::valid);
}

void bindCommunicator(py::module_& m) {
  bindFuture<RegisteredMemory>(m, "shared_future_RegisteredMemory");
  bindFuture<Connection>(m, "shared_future_Connection");
  bindFuture<Semaphore>(m, "shared_future_Semaphore");

  py::class_<Communicator, std::shared_ptr<Communicator>>(m, "Communicator")
      .def(py::init<std::shared_ptr<Bootstrap>, std::shared_ptr<Context>>(), py::arg("bootstrap"),
           py::arg("context") = nullptr)
      .def("bootstrap", &Communicator::bootstrap)
      .def("context", &Communicator::context)
      .def(
          "register_memory",
          [](Communicator& self, uintptr_t ptr, size_t size, TransportFlags transports) {
            return self.registerMemory(toPointer(ptr), size, transports);
          },
          py::arg("ptr"), py::arg("size"), py::arg("transports"))
      .def("send_memory", &Communicator::sendMemory, py::arg("memory"), py::arg("remote_rank"), py::arg("tag") = 0,
           Release())
      .def("recv_memory", &Communicator::recvMemory, py::arg("remote_rank"), py::arg("tag") = 0)
      .def("connect", py::overload_cast<const Endpoint&, int, int>(&Communicator::connect), py::arg("local_endpoint"),
           py::arg("remote_rank"), py::arg("tag") = 0, Release())
      .def("connect", py::overload_cast<const EndpointConfig&, int, int>(&Communicator::connect),
           py::arg("local_config"), py::arg("remote_rank"), py::arg("tag") = 0, Release())
      .def("build_semaphore", &Communicator::buildSemaphore, py::arg("connection"), py::arg("remote_rank"),
           py::arg("tag") = 0, Release())
      .def("remote_rank_of", &Communicator::remoteRankOf, py::arg("connection"))
      .def("tag_of", &Communicator::tagOf, py::arg("connection"))
      // The reference's pre-0.7 names, so that programs written for them keep running.
      .def(
          "connect_on_setup",
          [](Communicator& self, int remoteRank, int tag, const EndpointConfig& config) {
            return self.connect(config, remoteRank, tag);
          },
          py::arg("remote_rank"), py::arg("tag"), py::arg("local_config"), Release())
      .def("send_memory_on_setup", &Communicator::sendMemory, py::arg("memory"), py::arg("remote_rank"), py::arg("tag"),
           Release())
      .def("recv_memory_on_setup", &Communicator::recvMemory, py::arg("remote_rank"), py::arg("tag"))
      .def("setup", [](Communicator&) {});
}

}  // namespace

void registerCore(py::module_& m) {
  m.def("version", &version);
  m.attr("MSCCLPP_VERSION") = MSCCLPP_VERSION;
  m.attr("MSCCLPP_GIT_COMMIT") = MSCCLPP_GIT_COMMIT;
  bindBootstrap(m);
  bindTransports(m);
  bindEndpoints(m);
  bindMemoryAndConnections(m);
  bindCommunicator(m);
}

}  // namespace mscclpp::python
