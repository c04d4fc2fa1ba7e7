// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Setting up and launching plans. A context holds everything one (plan, buffers, sizes) needs:
// registered buffers, peers' buffers, semaphores and channels, scratch, and the device tables the
// kernel reads; it is built once, collectively, and reused by every later execution. Connections are
// kept per peer for the executor's lifetime and shared by all contexts.

#include <algorithm>
#include <map>
#include <mscclpp/env.hpp>
#include <mscclpp/executor.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/memory_channel.hpp>
#include <mscclpp/port_channel.hpp>
#include <mscclpp/semaphore.hpp>
#include <optional>
#include <tuple>

#include "common/checks.hpp"
#include "ext/common/element_types.hpp"
#include "ext/common/messages.hpp"
#include "ext/common/tags.hpp"
#include "ext/executor/device_plan.hpp"
#include "ext/executor/device_tables.hpp"
#include "ext/executor/op_vocabulary.hpp"
#include "ext/executor/plan.hpp"
#include "ext/executor/plan_error.hpp"

namespace mscclpp {

using namespace executor;

namespace {

template <typename T>
std::shared_ptr<T> toDevice(const std::vector<T>& host) {
  auto dev = detail::gpuCallocShared<T>(std::max<size_t>(host.size(), 1));
  if (!host.empty()) detail::gpuMemcpy(dev.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return dev;
}

/// One resolution (one packet type) bound to its context: the blocks' tables and the launch that
/// reads them, all but the data type filled in.
struct Resolution {
  std::shared_ptr<char> tables;
  DeviceContext launch;
};

struct ContextKey {
  const PlanImpl* plan;
  void* send;
  void* recv;
  size_t sendSize;
  size_t recvSize;
  bool operator<(const ContextKey& o) const {
    return std::tie(plan, send, recv, sendSize, recvSize) < std::tie(o.plan, o.send, o.recv, o.sendSize, o.recvSize);
  }
};

struct PlanContext {
  std::shared_ptr<PlanImpl> plan;  // keeps the key's plan address from being reused
  uint64_t scratchSize = 0;
  uint64_t scratchHalf = 0;
  std::shared_ptr<char> scratch;
  RegisteredMemory local[3];  // input, output, scratch
  std::vector<RegisteredMemory> remote;
  std::vector<Semaphore> semaphores;  // all of them, used or not: peers signal into their tokens
  std::vector<std::shared_ptr<MemoryDevice2DeviceSemaphore>> memorySemaphores;
  std::vector<BaseMemoryChannel> memoryChannels;
  std::vector<BasePortChannel> portChannels;
  MemoryId localIdBase = 0;
  BufferAddresses addresses;  // what every resolution's operands are bound to
  std::shared_ptr<DeviceSyncer> syncers;
  std::shared_ptr<DeviceSemaphore> deviceSemaphores;
  std::shared_ptr<uint32_t> epochs;
  std::map<PacketType, Resolution> resolved;
};

/// The three local buffers of a context, indexed by BufferType.
struct LocalBuffers {
  void* ptrs[3];
  size_t sizes[3];
};

/// How many channels of `type` GPU `gpu` of a plan has to `peer`.
int channelCount(const PlanGpu& gpu, int peer, ChannelType type) {
  const auto& list = type == ChannelType::Memory ? gpu.memoryChannels : gpu.portChannels;
  return static_cast<int>(
      std::count_if(list.begin(), list.end(), [&](const PlanChannel& c) { return c.peer == peer; }));
}

}  // namespace

struct Executor::Impl {
  std::shared_ptr<Communicator> comm;
  int rank;
  int nRanks;
  std::unique_ptr<ProxyService> proxy;
  bool proxyStarted = false;
  std::map<int, Connection> connections;
  std::map<ContextKey, std::unique_ptr<PlanContext>> contexts;
  // Whether launches are dependent (interpreter.cu); asked of the GPU at the first launch, since
  // an executor may be built, and refuse a plan, where there is none.
  std::optional<bool> dependentLaunch;

  explicit Impl(std::shared_ptr<Communicator> c) : comm(std::move(c)) {
    MSCCLPP_CHECK_USAGE(comm != nullptr, ext::messageFrom("Executor", "the communicator is null"));
    rank = comm->bootstrap()->getRank();
    nRanks = comm->bootstrap()->getNranks();
  }

  ~Impl() {
    contexts.clear();
    if (proxyStarted) {
      try {
        proxy->stopProxy();
      } catch (const std::exception& e) {
        LOG_WARN(EXEC, "the executor's proxy stopped with an error: ", e.what());
      }
    }
  }

  ProxyService& proxyService() {
    if (!proxy) proxy = std::make_unique<ProxyService>();
    return *proxy;
  }

  void connect(const std::vector<int>& peers) {
    int device = 0;
    MSCCLPP_CUDATHROW(cudaGetDevice(&device));
    std::vector<std::pair<int, std::shared_future<Connection>>> pending;
    for (int peer : peers) {
      if (connections.count(peer) != 0) continue;
      pending.emplace_back(peer, comm->connect(EndpointConfig(Transport::CudaIpc, Device(DeviceType::GPU, device)),
                                               peer, ext::kExecutorConnectionTag));
    }
    for (auto& [peer, future] : pending) connections.emplace(peer, future.get());
  }

  /// Refuses what no setup can run, before any communication and alike on every rank, so that no rank
  /// is left waiting for another.
  void checkArguments(const PlanImpl& plan, int callerRank, const void* send, const void* recv, DataType dataType,
                      PacketType packetType) const {
    const Where w{plan.path, callerRank, ""};
    const int planRanks = static_cast<int>(plan.gpus.size());
    if (planRanks > nRanks) {
      w.fail(concat("the plan \"", plan.name, "\" is written for ", planRanks, " ranks, but the communicator has ",
                    nRanks));
    }
    if (callerRank != plan.rank) w.fail(concat("the plan was read for rank ", plan.rank));
    if (callerRank != rank) w.fail(concat("the executor's communicator is rank ", rank));
    if (!ext::isElementType(dataType)) w.fail(concat("unknown data type ", static_cast<int>(dataType)));
#if !defined(__FP8_TYPES_EXIST__)
    // The interpreter has no FP8 arithmetic where the GPU toolkit has no FP8 types (HIP before ROCm 6).
    if (dataType == DataType::FP8_E4M3 || dataType == DataType::FP8_E5M2) {
      w.fail("FP8 data is not available: the GPU toolkit has no FP8 types");
    }
#endif
    if (packetType != PacketType::LL8 && packetType != PacketType::LL16) {
      w.fail(concat("unknown packet type ", static_cast<int>(packetType)));
    }
    if (send == nullptr || recv == nullptr) w.fail("a null buffer");
    // Data is moved in 4-byte words, and LL16 payloads in 8-byte ones.
    const uintptr_t alignment = plan.isUsingPacket && packetType == PacketType::LL16 ? 8 : 4;
    if ((reinterpret_cast<uintptr_t>(send) | reinterpret_cast<uintptr_t>(recv)) % alignment != 0) {
      w.fail(concat("buffers must be ", alignment, "-byte aligned"));
    }
  }

  /// Builds the context of `plan` on these buffers, collectively with the plan's other ranks: the steps
  /// below, in this order on every rank, so that their exchanges pair up.
  std::unique_ptr<PlanContext> setup(const std::shared_ptr<PlanImpl>& plan, void* send, void* recv, size_t sendSize,
                                     size_t recvSize, PacketType packetType) {
    AvoidCudaGraphCaptureGuard notCaptured;
    const ResolvedPlan first = plan->resolve(sendSize, recvSize, packetType);
    auto ctx = std::make_unique<PlanContext>();
    ctx->plan = plan;
    ctx->scratchSize = first.scratchSize;
    ctx->scratchHalf = first.scratchHalf;
    if (ctx->scratchSize > 0) ctx->scratch = detail::gpuCallocShared<char>(ctx->scratchSize);
    const LocalBuffers local{{send, recv, ctx->scratch.get()}, {sendSize, recvSize, ctx->scratchSize}};

    const std::vector<int> peers = peersOf(*plan);
    connect(peers);
    registerLocalBuffers(*ctx, local);
    exchangeBuffers(*ctx, local);
    buildChannels(*ctx, peers);
    const std::vector<MemoryId> remoteIds = addToProxy(*ctx, local);
    uploadTables(*ctx, local, remoteIds, first.nSyncers);
    addResolution(*ctx, first, packetType);
    return ctx;
  }

  /// The ranks this GPU has channels to and those that have channels to it.
  std::vector<int> peersOf(const PlanImpl& plan) const {
    std::vector<int> peers;
    for (int p = 0; p < static_cast<int>(plan.gpus.size()); ++p) {
      if (p == rank) continue;
      for (ChannelType t : {ChannelType::Memory, ChannelType::Port}) {
        if (channelCount(plan.self(), p, t) + channelCount(plan.gpus[p], rank, t) > 0) {
          peers.push_back(p);
          break;
        }
      }
    }
    return peers;
  }

  /// The local buffers, registered once each; a zero-sized one is never referenced (it has no chunks).
  void registerLocalBuffers(PlanContext& ctx, const LocalBuffers& local) {
    for (int t = 0; t < 3; ++t) {
      if (local.sizes[t] > 0) ctx.local[t] = comm->registerMemory(local.ptrs[t], local.sizes[t], Transport::CudaIpc);
    }
  }

  /// Sends this rank's buffers to the peers that map them and receives the peers' buffers this GPU maps,
  /// in the order of its plan's remote buffers.
  void exchangeBuffers(PlanContext& ctx, const LocalBuffers& local) {
    const PlanImpl& plan = *ctx.plan;
    for (int p = 0; p < static_cast<int>(plan.gpus.size()); ++p) {
      if (p == rank) continue;
      for (const PlanRemoteBuffer& rb : plan.gpus[p].remoteBuffers) {
        if (rb.rank != rank) continue;
        if (local.sizes[int(rb.type)] == 0) {
          Where{plan.path, rank, ""}.fail(
              concat("GPU ", p, " maps the ", bufferName(rb.type), " buffer of this rank, which is empty"));
        }
        comm->sendMemory(ctx.local[int(rb.type)], p, ext::kExecutorMemoryTag);
      }
    }
    std::vector<std::shared_future<RegisteredMemory>> remoteFutures;
    for (const PlanRemoteBuffer& rb : plan.self().remoteBuffers) {
      remoteFutures.push_back(comm->recvMemory(rb.rank, ext::kExecutorMemoryTag));
    }
    for (auto& f : remoteFutures) ctx.remote.push_back(f.get());
  }

  /// Semaphores and channels: the k-th channel of a type from this GPU to a peer pairs with the peer's
  /// k-th channel of that type to this GPU; both sides build as many semaphores as the larger of the two
  /// counts.
  void buildChannels(PlanContext& ctx, const std::vector<int>& peers) {
    const PlanImpl& plan = *ctx.plan;
    const PlanGpu& self = plan.self();
    for (ChannelType type : {ChannelType::Memory, ChannelType::Port}) {
      const int tag = type == ChannelType::Memory ? ext::kExecutorMemorySemaphoreTag : ext::kExecutorPortSemaphoreTag;
      std::map<int, std::vector<std::shared_future<Semaphore>>> futures;
      for (int p : peers) {
        const int n = std::max(channelCount(self, p, type), channelCount(plan.gpus[p], rank, type));
        for (int k = 0; k < n; ++k) futures[p].push_back(comm->buildSemaphore(connections.at(p), p, tag));
      }
      std::map<int, std::vector<Semaphore>> built;
      for (auto& [p, list] : futures) {
        for (auto& f : list) {
          built[p].push_back(f.get());
          ctx.semaphores.push_back(built[p].back());
        }
      }
      std::map<int, size_t> used;
      for (const PlanChannel& c : type == ChannelType::Memory ? self.memoryChannels : self.portChannels) {
        Semaphore& sem = built.at(c.peer).at(used[c.peer]++);
        if (type == ChannelType::Memory) {
          ctx.memorySemaphores.push_back(std::make_shared<MemoryDevice2DeviceSemaphore>(sem));
          ctx.memoryChannels.emplace_back(ctx.memorySemaphores.back());
        } else {
          ctx.portChannels.push_back(proxyService().basePortChannel(proxyService().addSemaphore(sem)));
        }
      }
    }
  }

  /// Port-channel access: the local buffers (three consecutive proxy ids) and the peers' buffers reached
  /// through port channels go to the proxy, which starts with the first plan that needs it. Returns the
  /// proxy id of each remote buffer (0 for those not reached through port channels).
  std::vector<MemoryId> addToProxy(PlanContext& ctx, const LocalBuffers& local) {
    const PlanGpu& self = ctx.plan->self();
    std::vector<MemoryId> remoteIds(self.remoteBuffers.size(), 0);
    const bool usesPort =
        !self.portChannels.empty() || std::any_of(self.remoteBuffers.begin(), self.remoteBuffers.end(),
                                                  [](const PlanRemoteBuffer& rb) { return rb.portAccess; });
    if (!usesPort) return remoteIds;
    ProxyService& ps = proxyService();
    for (int t = 0; t < 3; ++t) {
      // A placeholder for an empty buffer keeps the three ids consecutive.
      const MemoryId id = ps.addMemory(local.sizes[t] > 0 ? ctx.local[t] : ctx.local[local.sizes[0] > 0 ? 0 : 1]);
      if (t == 0) ctx.localIdBase = id;
      MSCCLPP_ASSERT(id == ctx.localIdBase + t, "proxy memory ids are not consecutive");
    }
    for (size_t b = 0; b < self.remoteBuffers.size(); ++b) {
      if (self.remoteBuffers[b].portAccess) remoteIds[b] = ps.addMemory(ctx.remote[b]);
    }
    if (!proxyStarted) {
      ps.startProxy();
      proxyStarted = true;
    }
    return remoteIds;
  }

  /// What the blocks' tables are bound to (channel handles, buffers' addresses and proxy ids), and the
  /// state the kernel keeps across executions: grid barriers, device semaphores and the per-block
  /// packet epochs.
  void uploadTables(PlanContext& ctx, const LocalBuffers& local, const std::vector<MemoryId>& remoteIds,
                    uint32_t nSyncers) {
    const PlanGpu& self = ctx.plan->self();
    BufferAddresses& a = ctx.addresses;
    for (int t = 0; t < 3; ++t) a.local[t] = static_cast<char*>(local.ptrs[t]);
    a.localIdBase = ctx.localIdBase;
    for (auto& c : ctx.memoryChannels) a.memoryChannels.push_back(c.deviceHandle());
    for (auto& c : ctx.portChannels) a.portChannels.push_back(c.deviceHandle());
    a.remote.assign(self.remoteBuffers.size(), nullptr);
    for (size_t b = 0; b < self.remoteBuffers.size(); ++b) {
      if (self.remoteBuffers[b].memoryAccess) a.remote[b] = static_cast<char*>(ctx.remote[b].data());
    }
    a.remoteIds = remoteIds;
    std::vector<DeviceSemaphore> sems;
    for (int init : self.semaphoreInits) sems.emplace_back(init);
    ctx.syncers = detail::gpuCallocShared<DeviceSyncer>(std::max<uint32_t>(nSyncers, 1));
    ctx.deviceSemaphores = toDevice(sems);
    ctx.epochs = detail::gpuCallocShared<uint32_t>(self.threadblocks.size());
  }

  void addResolution(PlanContext& ctx, const ResolvedPlan& r, PacketType packetType) {
    for (size_t b = 0; b < r.remoteBytesNeeded.size(); ++b) {
      if (r.remoteBytesNeeded[b] > ctx.remote[b].size()) {
        const PlanRemoteBuffer& rb = ctx.plan->self().remoteBuffers[b];
        Where{ctx.plan->path, rank, ""}.fail(concat("remote buffer ", b, " (GPU ", rb.rank, ") is accessed up to byte ",
                                                    r.remoteBytesNeeded[b], " but has ", ctx.remote[b].size(),
                                                    " bytes"));
      }
    }
    if (r.nSyncers > 0 && !ctx.syncers) ctx.syncers = detail::gpuCallocShared<DeviceSyncer>(r.nSyncers);
    const DeviceTables tables = buildDeviceTables(r, ctx.addresses);
    reserveInterpreterSharedMemory(tables.tableBytes, Where{ctx.plan->path, rank, ""});
    Resolution res;
    res.tables = toDevice(tables.bytes);
    DeviceContext& d = res.launch;
    d = DeviceContext{};
    d.tables = res.tables.get();
    d.tableBytes = tables.tableBytes;
    d.nBlocks = static_cast<uint32_t>(r.blocks.size());
    d.packetPlan = ctx.plan->isUsingPacket;
    d.nThreads = interpreterThreads(ctx.plan->nThreadsPerBlock, d.packetPlan);
    d.packetType = static_cast<uint8_t>(packetType);
    d.syncers = ctx.syncers.get();
    d.semaphores = ctx.deviceSemaphores.get();
    d.epochs = ctx.epochs.get();
    d.scratchHalf = ctx.scratchHalf;
    ctx.resolved.emplace(packetType, std::move(res));
  }
};

// Every context allocates the scratch its plan needs (sized from the buffers), so the shared default
// scratch of the reference's reuse_resources plans is not needed; the argument stays for source
// compatibility.
Executor::Executor(std::shared_ptr<Communicator> comm, std::shared_ptr<char>)
    : impl_(std::make_unique<Impl>(std::move(comm))) {}

Executor::~Executor() = default;

void Executor::execute(int rank, void* sendbuff, void* recvBuff, size_t sendBuffSize, size_t recvBuffSize,
                       DataType dataType, const ExecutionPlan& plan, cudaStream_t stream, PacketType packetType) {
  const auto& impl = ExecutionPlanAccess::impl(plan);
  impl_->checkArguments(*impl, rank, sendbuff, recvBuff, dataType, packetType);
  const ContextKey key{impl.get(), sendbuff, recvBuff, sendBuffSize, recvBuffSize};
  auto it = impl_->contexts.find(key);
  if (it == impl_->contexts.end()) {
    it = impl_->contexts.emplace(key, impl_->setup(impl, sendbuff, recvBuff, sendBuffSize, recvBuffSize, packetType))
             .first;
  }
  PlanContext& ctx = *it->second;
  auto resolved = ctx.resolved.find(packetType);
  if (resolved == ctx.resolved.end()) {
    AvoidCudaGraphCaptureGuard notCaptured;
    impl_->addResolution(ctx, impl->resolve(sendBuffSize, recvBuffSize, packetType), packetType);
    resolved = ctx.resolved.find(packetType);
  }
  DeviceContext launch = resolved->second.launch;
  launch.dataType = static_cast<uint8_t>(dataType);
  if (!impl_->dependentLaunch) impl_->dependentLaunch = env()->dependentLaunch && interpreterLaunchesDependent();
  launchInterpreter(launch, *impl_->dependentLaunch, stream);
}

}  // namespace mscclpp
