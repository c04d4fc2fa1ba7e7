// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What <mscclpp/core.hpp> of MSCCL++ declares, and what it brings through its includes (errors.hpp,
// gpu_data_types.hpp, version.hpp).
#include <mscclpp/core.hpp>
#include <type_traits>

namespace compat {

static_assert(mscclpp::UniqueIdBytes == 128);
static_assert(std::is_same_v<mscclpp::UniqueId, std::array<uint8_t, 128>>);
static_assert(std::is_abstract_v<mscclpp::Bootstrap>);
static_assert(std::is_base_of_v<mscclpp::Bootstrap, mscclpp::TcpBootstrap>);
static_assert(static_cast<int>(mscclpp::Transport::NumTransports) == 11);
static_assert(mscclpp::detail::TransportFlagsSize == 11);
static_assert(mscclpp::EndpointConfig::Ib::DefaultMaxCqSize == 1024);
// Through gpu_data_types.hpp.
static_assert(sizeof(mscclpp::f32x4) == 16);
static_assert(static_cast<int>(mscclpp::DataType::FP8_E5M2) == 6);
static_assert(std::is_pointer_v<cudaStream_t>);
// Through errors.hpp.
static_assert(std::is_base_of_v<mscclpp::BaseError, mscclpp::Error>);

// A Bootstrap of the user's own, overriding only the pure virtuals.
class UserBootstrap : public mscclpp::Bootstrap {
 public:
  int getRank() const override { return 0; }
  int getNranks() const override { return 1; }
  int getNranksPerNode() const override { return 1; }
  void send(void*, int, int, int) override {}
  void recv(void*, int, int, int) override {}
  void allGather(void*, int) override {}
  void barrier() override {}
};

void useCore(std::ostream& os, mscclpp::Communicator& comm, mscclpp::Connection& conn, mscclpp::RegisteredMemory mem) {
  std::string v = mscclpp::version();
  (void)v;
  UserBootstrap user;
  mscclpp::Bootstrap& asBase = user;
  asBase.groupBarrier({0});
  std::vector<char> bytes;
  asBase.send(bytes, 0, 0);
  asBase.recv(bytes, 0, 0);
  auto bootstrap = std::make_shared<mscclpp::TcpBootstrap>(0, 1);
  mscclpp::UniqueId id = mscclpp::TcpBootstrap::createUniqueId();
  bootstrap->initialize(id);
  bootstrap->initialize(std::string("127.0.0.1:50000"), 10);
  bootstrap->broadcast(nullptr, 0, 0);
  mscclpp::TransportFlags flags = mscclpp::Transport::CudaIpc | mscclpp::Transport::Ethernet;
  flags |= mscclpp::Transport::IB0;
  bool any = flags.has(mscclpp::Transport::CudaIpc) && (flags & mscclpp::AllIBTransports).any() &&
             (~flags).count() > 0 && flags != mscclpp::NoTransports && (flags ^ mscclpp::AllTransports).none() == false;
  (void)any;
  mscclpp::Device device(mscclpp::DeviceType::GPU, 0);
  mscclpp::EndpointConfig config(mscclpp::Transport::CudaIpc, device);
  mscclpp::EndpointConfig cpuConfig{mscclpp::Transport::Ethernet, mscclpp::DeviceType::CPU};
  (void)cpuConfig;
  std::shared_ptr<mscclpp::Context> context = mscclpp::Context::create();
  mscclpp::Endpoint endpoint = context->createEndpoint(config);
  mscclpp::Endpoint copy = mscclpp::Endpoint::deserialize(endpoint.serialize());
  mscclpp::Connection viaContext = context->connect(endpoint, copy);
  (void)viaContext;
  mscclpp::RegisteredMemory registered = context->registerMemory(nullptr, 0, flags);
  mscclpp::RegisteredMemory again = mscclpp::RegisteredMemory::deserialize(registered.serialize());
  (void)again.data();
  (void)again.originalDataPtr();
  (void)again.size();
  (void)again.transports();
  conn.write(mem, 0, mem, 0, 0);
  uint64_t token = 0;
  conn.updateAndSync(mem, 0, &token, 1);
  conn.flush();
  (void)conn.transport();
  (void)conn.remoteTransport();
  (void)conn.context();
  (void)conn.getMaxWriteQueueSize();
  std::shared_future<mscclpp::Connection> future = comm.connect(config, 1);
  std::shared_future<mscclpp::Connection> future2 = comm.connect({mscclpp::Transport::CudaIpc, device}, 1, 2);
  (void)future2;
  std::shared_future<mscclpp::Semaphore> semaphore = comm.buildSemaphore(future.get(), 1);
  (void)semaphore;
  comm.sendMemory(mem, 1);
  std::shared_future<mscclpp::RegisteredMemory> remote = comm.recvMemory(1);
  (void)remote;
  (void)comm.remoteRankOf(conn);
  (void)comm.tagOf(conn);
  std::shared_ptr<mscclpp::Bootstrap> commBootstrap = comm.bootstrap();
  std::shared_ptr<mscclpp::Context> commContext = comm.context();
  (void)commBootstrap;
  (void)commContext;
  mscclpp::SemaphoreStub stub = mscclpp::SemaphoreStub::deserialize(std::vector<char>{});
  mscclpp::Semaphore joined(stub, stub);
  (void)joined.connection();
  os << mscclpp::Transport::CudaIpc << device.type << device;
}

}  // namespace compat
