// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The host-side core: bootstrapping a group of processes, registering memory, connecting endpoints
// over a transport, and building semaphores. Source-compatible with MSCCL++ 0.8.

#ifndef MSCCLPP_CORE_HPP_
#define MSCCLPP_CORE_HPP_

#include <array>
#include <bitset>
#include <cstdint>
#include <future>
#include <memory>
#include <mscclpp/version.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "errors.hpp"
#include "gpu_data_types.hpp"

namespace mscclpp {

constexpr unsigned int UniqueIdBytes = 128;

/// Opaque bytes that let the ranks of a TcpBootstrap find rank 0 (made by createUniqueId on one rank
/// and passed to the others by any means, e.g. MPI_Bcast).
using UniqueId = std::array<uint8_t, UniqueIdBytes>;

/// "major.minor.patch" of this library.
std::string version();

/// A group of processes that can exchange small messages: the control plane beneath a Communicator.
/// Subclass it to bootstrap over something else (MPI, a key-value store): override the seven pure
/// virtuals; everything built on a Bootstrap works with the subclass.
/// Messages between two ranks are delivered in order per (peer, tag); different tags are independent.
class Bootstrap {
 public:
  Bootstrap() {}
  virtual ~Bootstrap() = default;
  virtual int getRank() const = 0;
  virtual int getNranks() const = 0;
  /// Number of ranks on this rank's host.
  virtual int getNranksPerNode() const = 0;
  /// Sends `size` bytes to `peer`; matched by a recv with the same size, peer and tag.
  virtual void send(void* data, int size, int peer, int tag) = 0;
  /// Receives `size` bytes from `peer` with `tag`.
  virtual void recv(void* data, int size, int peer, int tag) = 0;
  /// Rank r contributes allData[r*size, (r+1)*size) and receives every other rank's slot.
  virtual void allGather(void* allData, int size) = 0;
  /// Returns once every rank has entered.
  virtual void barrier() = 0;

  /// A barrier among `ranks` only (which must include this rank); uses tag 0.
  void groupBarrier(const std::vector<int>& ranks);
  /// Sends a length then the bytes; the receiving `recv(std::vector<char>&, ...)` resizes to fit.
  void send(const std::vector<char>& data, int peer, int tag);
  void recv(std::vector<char>& data, int peer, int tag);
};

/// A Bootstrap over TCP. Rank 0 listens at the address in the UniqueId (or the "ip:port" string); the
/// ranks form a ring through it and then open direct connections per (peer, tag) on demand.
/// Every blocking step, during initialize and after, is bounded by the timeout given to initialize;
/// on expiry it throws Error(Timeout) naming the rank and address it waited for. A rank that dies
/// makes the others fail instead of hang. Not thread-safe for concurrent operations on the same
/// (peer, tag); different tags may be used from different threads.
class TcpBootstrap : public Bootstrap {
 public:
  /// Passed as timeoutSec: use MSCCLPP_BOOTSTRAP_TIMEOUT (default 30 s).
  static constexpr int64_t DefaultTimeoutSec = INT64_MIN;

  /// A UniqueId naming a fresh listening address of this host; initialize rank 0 with it.
  static UniqueId createUniqueId();

  TcpBootstrap(int rank, int nRanks);
  ~TcpBootstrap();

  /// The id this bootstrap was initialized with (rank 0: the one it listens at).
  UniqueId getUniqueId() const;

  /// Joins the group. `timeoutSec` bounds the whole initialization and each later blocking operation;
  /// a negative value waits without limit.
  void initialize(UniqueId uniqueId, int64_t timeoutSec = DefaultTimeoutSec);
  /// Joins the group whose rank 0 listens at "ip:port", "[ipv6]:port" or "ifname:ip:port".
  void initialize(const std::string& ifIpPortTrio, int64_t timeoutSec = DefaultTimeoutSec);

  int getRank() const override;
  int getNranks() const override;
  int getNranksPerNode() const override;
  void send(void* data, int size, int peer, int tag) override;
  void recv(void* data, int size, int peer, int tag) override;
  void allGather(void* allData, int size) override;
  /// Sends `size` bytes from `root` to every rank.
  void broadcast(void* data, int size, int root);
  void barrier() override;

  using Bootstrap::recv;
  using Bootstrap::send;

 private:
  class Impl;
  std::unique_ptr<Impl> pimpl_;
};

/// Transports a Connection can use. IB0..IB7 are the first eight InfiniBand/RoCE devices.
enum class Transport {
  Unknown,
  CudaIpc,
  IB0,
  IB1,
  IB2,
  IB3,
  IB4,
  IB5,
  IB6,
  IB7,
  Ethernet,
  NumTransports,
};

namespace detail {
constexpr size_t TransportFlagsSize = 11;
static_assert(TransportFlagsSize == static_cast<size_t>(Transport::NumTransports),
              "TransportFlagsSize must match the number of transports");
using TransportFlagsBase = std::bitset<TransportFlagsSize>;
}  // namespace detail

/// A set of transports.
class TransportFlags : private detail::TransportFlagsBase {
 public:
  TransportFlags() = default;
  TransportFlags(Transport transport);

  bool has(Transport transport) const;
  bool none() const;
  bool any() const;
  bool all() const;
  size_t count() const;

  TransportFlags& operator|=(TransportFlags other);
  TransportFlags operator|(TransportFlags other) const;
  TransportFlags operator|(Transport transport) const;
  TransportFlags& operator&=(TransportFlags other);
  TransportFlags operator&(TransportFlags other) const;
  TransportFlags operator&(Transport transport) const;
  TransportFlags& operator^=(TransportFlags other);
  TransportFlags operator^(TransportFlags other) const;
  TransportFlags operator^(Transport transport) const;
  TransportFlags operator~() const;
  bool operator==(TransportFlags other) const;
  bool operator!=(TransportFlags other) const;

  detail::TransportFlagsBase toBitset() const;

 private:
  TransportFlags(detail::TransportFlagsBase bitset);
};

inline TransportFlags operator|(Transport transport1, Transport transport2) {
  return TransportFlags(transport1) | transport2;
}
inline TransportFlags operator&(Transport transport1, Transport transport2) {
  return TransportFlags(transport1) & transport2;
}
inline TransportFlags operator^(Transport transport1, Transport transport2) {
  return TransportFlags(transport1) ^ transport2;
}

extern const TransportFlags NoTransports;
extern const TransportFlags AllIBTransports;
extern const TransportFlags AllTransports;

/// Where memory or an endpoint lives.
enum class DeviceType {
  Unknown,
  CPU,
  GPU,
};

/// A device: its type and, for a GPU, its id (-1: the current device when used).
struct Device {
  Device() = default;
  Device(DeviceType type, int id = -1) : type(type), id(id) {}
  DeviceType type;
  int id;
};

std::ostream& operator<<(std::ostream& os, const Transport& transport);
std::ostream& operator<<(std::ostream& os, const DeviceType& deviceType);
std::ostream& operator<<(std::ostream& os, const Device& device);

/// The number of InfiniBand devices: the entries of MSCCLPP_HCA_DEVICES when it is set, else the
/// devices the verbs library lists. 0 when IB is unavailable (no library, no device, or a build without IB).
int getIBDeviceCount();

/// The device that `ibTransport` (IB0..IB7) stands for: entry i of MSCCLPP_HCA_DEVICES, else the i-th
/// verbs device. Throws Error(InvalidUsage) for another transport or an index without a device, and
/// always in a build without IB.
std::string getIBDeviceName(Transport ibTransport);

/// The IB transport that stands for device `ibDeviceName`. Throws Error(InvalidUsage) when no IB0..IB7
/// does, which in a build without IB is always.
Transport getIBTransportByDeviceName(const std::string& ibDeviceName);

/// How to create an Endpoint. Written so that `Transport::CudaIpc` or `{Transport::Ethernet,
/// DeviceType::CPU}` convert to it.
struct EndpointConfig {
  /// InfiniBand settings; ignored by other transports.
  struct Ib {
    static constexpr int DefaultPort = -1;
    static constexpr int DefaultGidIndex = 0;
    static constexpr int DefaultMaxCqSize = 1024;
    static constexpr int DefaultMaxCqPollNum = 1;
    static constexpr int DefaultMaxSendWr = 8192;
    static constexpr int DefaultMaxWrPerSend = 64;

    int deviceIndex;
    int port;
    int gidIndex;
    int maxCqSize;
    int maxCqPollNum;
    int maxSendWr;
    int maxWrPerSend;

    Ib(int deviceIndex = -1, int port = DefaultPort, int gidIndex = DefaultGidIndex, int maxCqSize = DefaultMaxCqSize,
       int maxCqPollNum = DefaultMaxCqPollNum, int maxSendWr = DefaultMaxSendWr, int maxWrPerSend = DefaultMaxWrPerSend)
        : deviceIndex(deviceIndex),
          port(port),
          gidIndex(gidIndex),
          maxCqSize(maxCqSize),
          maxCqPollNum(maxCqPollNum),
          maxSendWr(maxSendWr),
          maxWrPerSend(maxWrPerSend) {}
  };

  Transport transport;
  Device device;
  /// Writes a ProxyService lets pile up before it flushes; -1: the transport's default.
  int maxWriteQueueSize;
  Ib ib;

  EndpointConfig(Transport transport = Transport::Unknown, Device device = DeviceType::GPU, int maxWriteQueueSize = -1,
                 Ib ib = {})
      : transport(transport), device(device), maxWriteQueueSize(maxWriteQueueSize), ib(ib) {}
};

class Context;
class Connection;
class BaseConnection;
class Communicator;
class SemaphoreStub;
class Semaphore;
class ProxyService;

/// One end of a future Connection: what a peer needs to connect to this process over one transport.
/// Created by Context::createEndpoint, sent to the peer as bytes (serialize/deserialize).
class Endpoint {
 public:
  Endpoint() = default;

  const EndpointConfig& config() const;
  Transport transport() const;
  const Device& device() const;
  uint64_t hostHash() const;
  uint64_t pidHash() const;
  int maxWriteQueueSize() const;

  std::vector<char> serialize() const;
  /// Throws Error(InvalidUsage) for bytes that are not a serialized Endpoint.
  static Endpoint deserialize(const std::vector<char>& data);

 private:
  struct Impl;
  Endpoint(std::shared_ptr<Impl> pimpl);
  std::shared_ptr<Impl> pimpl_;

  friend struct EndpointAccess;
};

/// A block of memory made known to a Context, and its description for peers. Does not own the memory.
/// The copy a peer deserializes maps the memory where its transports allow (same process: the pointer
/// itself; same host over CudaIpc: an IPC mapping); `data()` is then the local address of it.
class RegisteredMemory {
 public:
  RegisteredMemory() = default;
  ~RegisteredMemory();

  /// The address in this process (the mapping, for memory of another process; nullptr if unmapped).
  void* data() const;
  /// The address in the process that registered it.
  void* originalDataPtr() const;
  size_t size() const;
  TransportFlags transports() const;

  std::vector<char> serialize() const;
  /// Throws Error(InvalidUsage) for bytes that are not a serialized RegisteredMemory, and an Error
  /// listing every attempt when the memory cannot be mapped here.
  static RegisteredMemory deserialize(const std::vector<char>& data);

 private:
  struct Impl;
  RegisteredMemory(std::shared_ptr<Impl> pimpl);
  std::shared_ptr<Impl> pimpl_;

  friend struct RegisteredMemoryAccess;
};

/// A connection between two endpoints. A value type: copies share the connection.
class Connection {
 public:
  Connection() = default;

  /// Copies `size` bytes from src+srcOffset (local) to dst+dstOffset (remote). Asynchronous: complete
  /// after flush(). Throws Error(InvalidUsage) for out-of-range offsets or memory not registered with
  /// this connection's transport.
  void write(RegisteredMemory dst, uint64_t dstOffset, RegisteredMemory src, uint64_t srcOffset, uint64_t size);

  /// Sets *src = newValue and propagates the 8 bytes to dst+dstOffset (remote). *src stands for what
  /// that remote word holds (as a semaphore's outbound counter stands for the peer's token): IB with
  /// RDMA atomics adds newValue minus the old *src to the word, the other transports store newValue.
  void updateAndSync(RegisteredMemory dst, uint64_t dstOffset, uint64_t* src, uint64_t newValue);

  /// Waits until every earlier write and updateAndSync is complete at the destination. A negative
  /// timeout waits without limit; on expiry throws Error(Timeout).
  void flush(int64_t timeoutUsec = -1);

  Transport transport() const;
  Transport remoteTransport() const;
  std::shared_ptr<Context> context() const;
  const Device& localDevice() const;
  int getMaxWriteQueueSize() const;

 private:
  Connection(std::shared_ptr<BaseConnection> impl);
  std::shared_ptr<BaseConnection> impl_;

  friend struct ConnectionAccess;
};

/// How much memory a Context holds, for monitoring.
struct ContextMemoryUsage {
  size_t deviceBytes = 0;        // device memory allocated by the library for this context
  size_t hostPinnedBytes = 0;    // pinned host memory allocated by the library for this context
  size_t exportedHandles = 0;    // live exported IPC handles of this context's allocations
  size_t tokenPoolChunks = 0;    // device chunks backing the semaphore token pool
  size_t tokenPoolCapacity = 0;  // tokens the pool can hand out without growing
  size_t tokensInUse = 0;        // tokens handed out and not returned
};

/// Owns the resources connections share: transport contexts, streams, the semaphore token pool.
/// Thread-safe.
class Context : public std::enable_shared_from_this<Context> {
 public:
  static std::shared_ptr<Context> create() { return std::shared_ptr<Context>(new Context()); }
  ~Context();

  /// Registers [ptr, ptr+size) for `transports`. GPU memory registered with CudaIpc may be any range
  /// inside an allocation. Host memory takes Ethernet (and IB).
  RegisteredMemory registerMemory(void* ptr, size_t size, TransportFlags transports);

  Endpoint createEndpoint(EndpointConfig config);

  /// Connects a local endpoint of this context to a remote one. Both sides must call it. Throws
  /// Error(InvalidUsage) when the transports do not match.
  Connection connect(const Endpoint& localEndpoint, const Endpoint& remoteEndpoint);

  /// Memory this context holds right now.
  ContextMemoryUsage memoryUsage() const;

 private:
  Context();
  struct Impl;
  std::unique_ptr<Impl> pimpl_;

  friend struct ContextAccess;
};

/// One side's half of a Semaphore: the 8-byte inbound token a peer signals, registered with the
/// connection's transport. Exchanged as bytes, then joined into a Semaphore.
class SemaphoreStub {
 public:
  SemaphoreStub(const Connection& connection);

  /// The registered token.
  const RegisteredMemory& memory() const;

  std::vector<char> serialize() const;
  /// Throws Error(InvalidUsage) for bytes that are not a serialized SemaphoreStub.
  static SemaphoreStub deserialize(const std::vector<char>& data);

 protected:
  struct Impl;
  SemaphoreStub(std::shared_ptr<Impl> pimpl);
  std::shared_ptr<Impl> pimpl_;

  friend struct SemaphoreStubAccess;
};

/// A pair of tokens joined over a connection: the local inbound token and the peer's.
class Semaphore {
 public:
  Semaphore() = default;
  Semaphore(const SemaphoreStub& localStub, const SemaphoreStub& remoteStub);

  Connection& connection();
  const RegisteredMemory& localMemory() const;
  const RegisteredMemory& remoteMemory() const;

 protected:
  // Protected, as in MSCCL++: classes derived from Semaphore reach its state.
  struct Impl;
  std::shared_ptr<Impl> pimpl_;
  friend struct SemaphoreAccess;
};

template <typename T>
using NonblockingFuture [[deprecated("Use std::shared_future instead.")]] = std::shared_future<T>;

/// Sets up memories, connections and semaphores among the ranks of a Bootstrap.
/// Sends start at once; receives (recvMemory, connect, buildSemaphore) return futures that do their
/// work on the first get(). The i-th send to (rank, tag) matches the i-th receive from (rank, tag).
/// Thread-safe.
class Communicator {
 public:
  Communicator(std::shared_ptr<Bootstrap> bootstrap, std::shared_ptr<Context> context = nullptr);
  ~Communicator();

  std::shared_ptr<Bootstrap> bootstrap();
  std::shared_ptr<Context> context();

  RegisteredMemory registerMemory(void* ptr, size_t size, TransportFlags transports);

  void sendMemory(RegisteredMemory memory, int remoteRank, int tag = 0);
  std::shared_future<RegisteredMemory> recvMemory(int remoteRank, int tag = 0);

  /// Connects to `remoteRank` (which calls connect with this rank and the same tag).
  std::shared_future<Connection> connect(const Endpoint& localEndpoint, int remoteRank, int tag = 0);
  std::shared_future<Connection> connect(const EndpointConfig& localConfig, int remoteRank, int tag = 0);

  /// Builds a Semaphore over `connection` with `remoteRank` (which calls it with the same tag).
  std::shared_future<Semaphore> buildSemaphore(const Connection& connection, int remoteRank, int tag = 0);

  /// The peer and tag a connection made by this communicator was made with. Throws std::out_of_range
  /// for other connections.
  int remoteRankOf(const Connection& connection);
  int tagOf(const Connection& connection);

  [[deprecated("Use sendMemory() instead.")]] void sendMemoryOnSetup(RegisteredMemory memory, int remoteRank, int tag) {
    sendMemory(memory, remoteRank, tag);
  }
  [[deprecated("Use recvMemory() instead.")]] std::shared_future<RegisteredMemory> recvMemoryOnSetup(int remoteRank,
                                                                                                     int tag) {
    return recvMemory(remoteRank, tag);
  }
  [[deprecated("setup() is no longer needed.")]] void setup() {}

 private:
  struct Impl;
  std::unique_ptr<Impl> pimpl_;
};

template <class T>
using DeviceHandle = typename T::DeviceHandle;

/// The device handle of a channel or semaphore.
template <typename T>
DeviceHandle<std::remove_reference_t<T>> deviceHandle(T&& t) {
  return t.deviceHandle();
}

template <class T>
using PacketPayload = typename T::Payload;

}  // namespace mscclpp

namespace std {
template <>
struct hash<mscclpp::TransportFlags> {
  size_t operator()(const mscclpp::TransportFlags& flags) const {
    return hash<mscclpp::detail::TransportFlagsBase>()(flags.toBitset());
  }
};
}  // namespace std

#endif  // MSCCLPP_CORE_HPP_
