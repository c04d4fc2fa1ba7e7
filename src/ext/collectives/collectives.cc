// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The host side of Collectives: setup at construction (scratch registered and mapped by every peer,
// counters), argument checks, the choice of algorithm and the launch. No call after construction
// allocates, registers or talks to a peer's host, except registerBuffer/deregisterBuffer
// (registry.hpp) and, once per captured call, a call captured into a CUDA graph on unregistered
// buffers (capture_registry.hpp).

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <map>
#include <mscclpp/collectives.hpp>
#include <mscclpp/env.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <string>
#include <vector>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "common/logger.hpp"
#include "ext/collectives/capture_registry.hpp"
#include "ext/collectives/kernels.hpp"
#include "ext/collectives/registry.hpp"
#include "ext/collectives/selection.hpp"
#include "ext/collectives/tuning.hpp"
#include "ext/common/call_bytes.hpp"
#include "ext/common/messages.hpp"
#include "ext/common/tags.hpp"
#include "gpu/driver_api.hpp"

namespace mscclpp {
namespace collectives {

namespace {

/// What every rank tells the others at construction.
struct RankInfo {
  uint64_t hostHash;
  uint64_t gpuHash;
};

std::shared_ptr<Communicator> nonNull(std::shared_ptr<Communicator> comm) {
  MSCCLPP_CHECK_USAGE(comm != nullptr, ext::messageFrom("Collectives", "null communicator"));
  return comm;
}

bool elementAligned(const void* ptr, size_t elemSize) { return (reinterpret_cast<uintptr_t>(ptr) % elemSize) == 0; }

/// Whether a reduction can run zero-copy: every kind but PreMulSum, whose scalar each rank applies to its
/// own input and which the owner of a chunk, reducing every rank's input, does not have.
bool zeroCopyReduces(const ReduceOp& op) { return op.kind != ReduceOp::Kind::PreMulSum; }

/// Files larger than this are not tuning tables (a table has a few lines per collective).
constexpr std::streamoff kMaxTuningFileBytes = 1 << 20;

/// Rank 0's tuning table (its `path`), on every rank: rank 0 reads the file and sends what it read,
/// or why it could not, so every rank parses the same text and accepts or refuses it alike, and no
/// rank depends on its own view of the filesystem. Always exchanged, also without a file, so that a
/// Config that differs between ranks cannot leave a message behind.
std::unique_ptr<TuningTable> loadTuning(Bootstrap& bootstrap, const std::string& path) {
  const int rank = bootstrap.getRank(), nRanks = bootstrap.getNranks();
  std::vector<char> message;  // 'n': no table; 't' + text; 'e' + why the file could not be read
  if (rank == 0) {
    if (path.empty()) {
      message = {'n'};
    } else {
      std::ifstream file(path, std::ios::binary | std::ios::ate);
      const std::streamoff size = file ? static_cast<std::streamoff>(file.tellg()) : -1;
      std::string why;
      if (!file || size < 0) {
        why = "cannot be read";
      } else if (size > kMaxTuningFileBytes) {
        why = "is larger than 1 MiB, which no tuning table is";
      } else {
        message.assign(static_cast<size_t>(size) + 1, 't');
        file.seekg(0);
        if (!file.read(message.data() + 1, size)) why = "cannot be read";
      }
      if (!why.empty()) {
        const std::string text = "e" + why;
        message.assign(text.begin(), text.end());
      }
    }
    for (int p = 1; p < nRanks; ++p) bootstrap.send(message, p, ext::kCollectivesTuningTag);
  } else {
    bootstrap.recv(message, 0, ext::kCollectivesTuningTag);
  }
  MSCCLPP_CHECK_USAGE(
      !message.empty() && message[0] != 'e',
      ext::messageFrom("Collectives", "the tuning file of rank 0 ", path.empty() ? "" : "'" + path + "' ",
                       std::string(message.begin() + (message.empty() ? 0 : 1), message.end())));
  if (message[0] == 'n') return nullptr;
  const std::string text(message.begin() + 1, message.end());
  return std::make_unique<TuningTable>(parseTuningTable(text, "tuning file of rank 0"));
}

}  // namespace

ReduceSpec makeReduceSpec(const ReduceOp& op) {
  ReduceSpec spec;
  switch (op.kind) {
    case ReduceOp::Kind::Sum:
      spec.kind = ReduceSpec::Kind::Sum;
      return spec;
    case ReduceOp::Kind::Avg:
      spec.kind = ReduceSpec::Kind::Sum;
      spec.average = true;
      return spec;
    case ReduceOp::Kind::Prod:
      spec.kind = ReduceSpec::Kind::Prod;
      return spec;
    case ReduceOp::Kind::Max:
      spec.kind = ReduceSpec::Kind::Max;
      return spec;
    case ReduceOp::Kind::Min:
      spec.kind = ReduceSpec::Kind::Min;
      return spec;
    case ReduceOp::Kind::PreMulSum:
      spec.kind = ReduceSpec::Kind::Sum;
      spec.preMultiplies = true;
      if (op.residence == ReduceOp::ScalarResidence::Device) {
        MSCCLPP_CHECK_USAGE(op.deviceScalar != nullptr, "PreMulSum with a null device scalar");
        spec.scalarPtr = op.deviceScalar;
      } else {
        MSCCLPP_CHECK_USAGE(op.residence == ReduceOp::ScalarResidence::Host, "PreMulSum without a scalar");
        spec.scalarBits = op.hostScalarBits;
      }
      return spec;
  }
  MSCCLPP_THROW(InvalidUsage, "unknown reduction ", static_cast<int>(op.kind));
}

struct Collectives::Impl {
  struct P2POp {
    bool isSend;
    int peer;
    char* buf;
    uint64_t bytes;
  };

  std::shared_ptr<Communicator> comm;
  int rank = 0;
  int nRanks = 0;
  Config config;
  std::unique_ptr<TuningTable> tuning;  // rank 0's tuning file, or none
  ScratchLayout layout;
  GpuBuffer<char> scratch;
  RegisteredMemory localScratch;
  std::vector<RegisteredMemory> peerScratch;
  std::shared_ptr<uint64_t> barrierCounts;
  std::shared_ptr<uint64_t> llEpochs;
  DeviceState dev;
  BufferRegistry registry;
  CaptureRegistry captures;
  bool inGroup = false;
  std::vector<P2POp> group;
  cudaStream_t groupStream = nullptr;

  Impl(std::shared_ptr<Communicator> c, const Config& requested);

  static GpuBuffer<char> allocateScratch(const ScratchLayout& l) { return GpuBuffer<char>(l.totalBytes); }

  void checkNotInGroup(const char* what) const {
    MSCCLPP_CHECK_USAGE(!inGroup, what, " inside groupStart/groupEnd: only send and recv may be grouped");
  }
  void checkBuffer(const void* ptr, size_t bytes, DataType type, const char* what) const {
    MSCCLPP_CHECK_USAGE(bytes == 0 || ptr != nullptr, what, ": null buffer for ", bytes, " bytes");
    MSCCLPP_CHECK_USAGE(elementAligned(ptr, dataTypeSize(type)), what, ": buffer ", ptr, " is not aligned to its ",
                        dataTypeName(type), " elements");
  }
  /// The bytes of `count` elements of `type`, after checking that `parts` times as many fit in one
  /// buffer of a call (ext::kMaxCallBytes), so that no count wraps into a small size.
  size_t segmentBytes(size_t count, DataType type, size_t parts, const char* what) const {
    const size_t elemSize = dataTypeSize(type);
    uint64_t total = 0;
    MSCCLPP_CHECK_USAGE(ext::callBytes(count, parts, elemSize, total), what, ": ", count, " elements of ",
                        dataTypeName(type), parts > 1 ? concat(" for each of ", parts, " ranks") : std::string(),
                        " are more than the ", ext::kMaxCallBytes, " bytes a buffer of one call may hold");
    return count * elemSize;
  }
  void checkRoot(int root, const char* what) const {
    MSCCLPP_CHECK_USAGE(root >= 0 && root < nRanks, what, ": root ", root, " out of [0, ", nRanks, ")");
  }
  /// What a call runs, and for ZeroCopy its tuned block count (0: the tiling's own).
  struct Choice {
    Algorithm algorithm = Algorithm::Auto;
    uint32_t zeroCopyBlocks = 0;
  };
  Choice choose(Collective collective, size_t segBytes, bool registered = false) const {
    Choice c;
    c.algorithm =
        selectAlgorithm(collective, segBytes, nRanks, config, layout, registered, tuning.get(), &c.zeroCopyBlocks);
    return c;
  }
  /// The device state of a call chosen as `c`.
  DeviceState devFor(const Choice& c) const {
    DeviceState d = dev;
    d.zeroCopyBlocks = c.zeroCopyBlocks;
    return d;
  }
  /// The algorithm of a call of `collective` with segment `segBytes`. Where it runs on peers' buffers,
  /// each of `buffers` (those the call reads or writes in peers) has its view filled with every rank's
  /// pointer: the buffers lie in registrations, or `stream` is being captured and the capture-time
  /// exchange mapped them (collective; capture_registry.hpp). `peersMayAccess` false (a call the
  /// zero-copy and copy-engine paths cannot run) chooses as for unregistered buffers. Where registration
  /// would not change the choice (the LL sizes, mostly), no registration is looked up: a lookup costs two
  /// driver calls per buffer (the check that the allocation is still the registered one), which small
  /// eager calls pay at the host's issue rate. Every rank chooses alike: the choice depends only on what
  /// every rank passes, on registrations made collectively and on rank 0's tuning table.
  Choice chooseFor(Collective collective, size_t segBytes, cudaStream_t stream,
                   std::initializer_list<CaptureBuffer> buffers, bool peersMayAccess = true) {
    const Choice unregistered = choose(collective, segBytes, false);
    if (!peersMayAccess) return unregistered;
    const Choice onRegistered = choose(collective, segBytes, true);
    if (onRegistered.algorithm == unregistered.algorithm) return unregistered;
    bool all = true;
    for (const CaptureBuffer& b : buffers) {
      if (!(all = registry.find(b.ptr, b.bytes, *b.view))) break;
    }
    if (all) return onRegistered;
    if (captures.enabled() && runsOnPeerBuffers(onRegistered.algorithm) && CaptureRegistry::capturing(stream) &&
        captures.exchange(collective, segBytes, buffers)) {
      return onRegistered;
    }
    return unregistered;
  }
  static bool runsOnPeerBuffers(Algorithm a) { return a == Algorithm::ZeroCopy || a == Algorithm::CopyEngine; }
  void copyLocal(void* dst, const void* src, size_t bytes, cudaStream_t stream) const {
    if (bytes == 0 || dst == src) return;
    MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  }
  void addEntry(PairPlan& plan, int peer, const void* send, uint64_t sendBytes, void* recv, uint64_t recvBytes) const {
    if (sendBytes == 0 && recvBytes == 0) return;
    MSCCLPP_CHECK_USAGE(plan.nEntries < kMaxPairEntries, "more than ", kMaxPairEntries,
                        " transfers in one launch (group fewer send/recv calls)");
    PairEntry& e = plan.entries[plan.nEntries++];
    e.peer = peer;
    e.send = static_cast<const char*>(send);
    e.sendBytes = sendBytes;
    e.recv = static_cast<char*>(recv);
    e.recvBytes = recvBytes;
  }
};

Collectives::Impl::Impl(std::shared_ptr<Communicator> c, const Config& requested)
    : comm(nonNull(std::move(c))),
      scratch(0),
      registry(comm, ext::kCollectivesRegisterTag),
      captures(comm, ext::kCollectivesCaptureTag, static_cast<size_t>(env()->collCaptureCache)) {
  std::shared_ptr<Bootstrap> bootstrap = comm->bootstrap();
  rank = bootstrap->getRank();
  nRanks = bootstrap->getNranks();
  MSCCLPP_CHECK_USAGE(nRanks <= kMaxRanks,
                      ext::messageFrom("Collectives", nRanks, " ranks; at most ", kMaxRanks, " are supported"));

  int device = 0;
  MSCCLPP_CUDATHROW(cudaGetDevice(&device));
  char busId[64] = {};
  MSCCLPP_CUDATHROW(cudaDeviceGetPCIBusId(busId, sizeof(busId), device));
  // The UUID tells MIG instances of one board apart (same bus, separate memory and L2); processes
  // sharing one GPU or one MIG instance (MPS) see the same.
  std::string uuid;
  MSCCLPP_CUDATHROW(deviceUuid(device, uuid));
  std::vector<RankInfo> infos(nRanks);
  infos[rank].hostHash = getHostHash();
  infos[rank].gpuHash = hashString(hostIdentity() + "/" + busId + "/" + uuid);
  bootstrap->allGather(infos.data(), sizeof(RankInfo));
  int ranksPerGpu = 1;
  for (int r = 0; r < nRanks; ++r) {
    MSCCLPP_CHECK_USAGE(infos[r].hostHash == infos[rank].hostHash,
                        ext::messageFrom("Collectives", "rank ", r,
                                         " is on another host; ranks of several hosts are not supported yet"));
    const int sharing = static_cast<int>(
        std::count_if(infos.begin(), infos.end(), [&](const RankInfo& i) { return i.gpuHash == infos[r].gpuHash; }));
    ranksPerGpu = std::max(ranksPerGpu, sharing);
  }
  config = resolveConfig(requested, ranksPerGpu, *env());
  tuning = loadTuning(*bootstrap, config.tuningFile);
  layout = makeScratchLayout(nRanks, static_cast<uint32_t>(config.maxBlocks), config.llMaxBytes, config.scratchBytes);

  scratch = allocateScratch(layout);
  barrierCounts = detail::gpuCallocShared<uint64_t>(static_cast<size_t>(layout.maxBlocks) * nRanks);
  llEpochs = detail::gpuCallocShared<uint64_t>(layout.maxBlocks);

  localScratch = comm->registerMemory(scratch.data(), layout.totalBytes, Transport::CudaIpc);
  for (int p = 0; p < nRanks; ++p) {
    if (p != rank) comm->sendMemory(localScratch, p, ext::kCollectivesSetupTag);
  }
  std::vector<std::shared_future<RegisteredMemory>> futures(nRanks);
  for (int p = 0; p < nRanks; ++p) {
    if (p != rank) futures[p] = comm->recvMemory(p, ext::kCollectivesSetupTag);
  }
  peerScratch.resize(nRanks);
  dev.layout = layout;
  dev.rank = rank;
  dev.nRanks = nRanks;
  dev.barrierCounts = barrierCounts.get();
  dev.llEpochs = llEpochs.get();
  dev.dependentLaunch = env()->dependentLaunch && collectiveKernelsLaunchDependent();
  for (int r = 0; r < nRanks; ++r) {
    if (infos[r].gpuHash == infos[rank].gpuHash) dev.ranksOnThisGpu |= uint64_t{1} << r;
  }
  for (int p = 0; p < nRanks; ++p) {
    if (p == rank) {
      dev.scratch[p] = scratch.data();
      continue;
    }
    peerScratch[p] = futures[p].get();
    dev.scratch[p] = static_cast<char*>(peerScratch[p].data());
    MSCCLPP_CHECK_USAGE(dev.scratch[p] != nullptr, ext::messageFrom("Collectives", "the scratch of rank ", p,
                                                                    " cannot be mapped here over CudaIpc"));
  }
  // Nobody may write into a peer's scratch before that peer has it mapped and zeroed.
  bootstrap->barrier();
  LOG_INFO(EXEC, "collectives: rank ", rank, "/", nRanks, ", ", ranksPerGpu, " rank(s) per GPU, ", config.maxBlocks,
           " blocks, scratch ", layout.totalBytes, " bytes (staged slot ", layout.stagedSlotBytes, ", LL slot ",
           layout.llSlotPackets, " packets), ", dev.dependentLaunch ? "dependent" : "plain", " launches");
}

Collectives::Collectives(std::shared_ptr<Communicator> communicator, const Config& config)
    : pimpl_(std::make_unique<Impl>(std::move(communicator), config)) {}

Collectives::~Collectives() = default;

int Collectives::rank() const { return pimpl_->rank; }
int Collectives::nRanks() const { return pimpl_->nRanks; }
const Config& Collectives::config() const { return pimpl_->config; }

Algorithm Collectives::algorithmFor(Collective collective, size_t bytes, bool registered) const {
  return pimpl_->choose(collective, bytes, registered).algorithm;
}

size_t Collectives::captureMappings() const { return pimpl_->captures.mappings(); }

void Collectives::allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                            cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("allReduce");
  const size_t bytes = m.segmentBytes(count, type, 1, "allReduce");
  m.checkBuffer(send, bytes, type, "allReduce send");
  m.checkBuffer(recv, bytes, type, "allReduce recv");
  const ReduceSpec spec = makeReduceSpec(op);
  if (count == 0) return;
  PeerBuffers in, out;
  const Impl::Choice choice =
      m.chooseFor(Collective::AllReduce, bytes, stream, {{send, bytes, &in}, {recv, bytes, &out}}, zeroCopyReduces(op));
  const Algorithm algorithm = choice.algorithm;
  if (algorithm == Algorithm::LLOneShot) {
    launchLLAllReduce(m.dev, send, recv, count, type, spec, stream);
  } else if (algorithm == Algorithm::LLTwoShot) {
    launchLLTwoShotAllReduce(m.dev, send, recv, count, type, spec, stream);
  } else if (algorithm == Algorithm::ZeroCopy) {
    launchZeroCopyAllReduce(m.devFor(choice), in, out, count, type, spec, stream);
  } else {
    launchStagedAllReduce(m.dev, send, recv, count, type, spec, stream);
  }
}

void Collectives::reduceScatter(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                                cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("reduceScatter");
  const size_t bytes = m.segmentBytes(count, type, m.nRanks, "reduceScatter");
  m.checkBuffer(send, bytes * m.nRanks, type, "reduceScatter send");
  m.checkBuffer(recv, bytes, type, "reduceScatter recv");
  const ReduceSpec spec = makeReduceSpec(op);
  if (count == 0) return;
  PeerBuffers in;
  const Impl::Choice choice =
      m.chooseFor(Collective::ReduceScatter, bytes, stream, {{send, bytes * m.nRanks, &in}}, zeroCopyReduces(op));
  const Algorithm algorithm = choice.algorithm;
  if (algorithm == Algorithm::LLOneShot) {
    launchLLReduceScatter(m.dev, send, recv, count, type, spec, stream);
  } else if (algorithm == Algorithm::ZeroCopy) {
    launchZeroCopyReduceScatter(m.devFor(choice), in, recv, count, type, spec, stream);
  } else {
    launchStagedReduceScatter(m.dev, send, recv, count, type, spec, stream);
  }
}

void Collectives::reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
                         cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("reduce");
  m.checkRoot(root, "reduce");
  const size_t bytes = m.segmentBytes(count, type, 1, "reduce");
  m.checkBuffer(send, bytes, type, "reduce send");
  if (m.rank == root) m.checkBuffer(recv, bytes, type, "reduce recv");
  const ReduceSpec spec = makeReduceSpec(op);
  if (count == 0) return;
  launchStagedReduce(m.dev, send, recv, count, type, spec, root, stream);
}

void Collectives::allGather(const void* send, void* recv, size_t count, DataType type, cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("allGather");
  const size_t bytes = m.segmentBytes(count, type, m.nRanks, "allGather");
  m.checkBuffer(send, bytes, type, "allGather send");
  m.checkBuffer(recv, bytes * m.nRanks, type, "allGather recv");
  if (count == 0) return;
  char* out = static_cast<char*>(recv);
  PeerBuffers outs;
  const Impl::Choice choice = m.chooseFor(Collective::AllGather, bytes, stream, {{recv, bytes * m.nRanks, &outs}});
  const Algorithm algorithm = choice.algorithm;
  if (algorithm == Algorithm::LLOneShot) {
    launchLLAllGather(m.dev, send, recv, bytes, stream);
    return;
  }
  if (algorithm == Algorithm::ZeroCopy) {
    launchZeroCopyAllGather(m.devFor(choice), send, outs, bytes, stream);
    return;
  }
  if (algorithm == Algorithm::CopyEngine) {
    launchCopyEngineAllGather(m.dev, send, outs, bytes, stream);
    return;
  }
  m.copyLocal(out + m.rank * bytes, send, bytes, stream);
  PairPlan plan;
  for (int p = 0; p < m.nRanks; ++p) {
    if (p != m.rank) m.addEntry(plan, p, send, bytes, out + p * bytes, bytes);
  }
  launchPairwise(m.dev, plan, stream);
}

void Collectives::allToAll(const void* send, void* recv, size_t count, DataType type, cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("allToAll");
  const size_t bytes = m.segmentBytes(count, type, m.nRanks, "allToAll");
  m.checkBuffer(send, bytes * m.nRanks, type, "allToAll send");
  m.checkBuffer(recv, bytes * m.nRanks, type, "allToAll recv");
  if (count == 0) return;
  const char* in = static_cast<const char*>(send);
  char* out = static_cast<char*>(recv);
  // The copy engines write each part straight into the peer's output, so only out of place (see
  // copy_engine.cu); send must be registered too, so that every rank, holding both buffers at the same
  // offsets of the same registrations, makes the same choice.
  PeerBuffers outs, ins;
  const Algorithm algorithm =
      m.chooseFor(Collective::AllToAll, bytes, stream,
                  {{send, bytes * m.nRanks, &ins}, {recv, bytes * m.nRanks, &outs}}, send != recv)
          .algorithm;
  if (algorithm == Algorithm::LLOneShot) {
    launchLLAllToAll(m.dev, send, recv, bytes, stream);
    return;
  }
  if (algorithm == Algorithm::CopyEngine) {
    launchCopyEngineAllToAll(m.dev, send, outs, bytes, stream);
    return;
  }
  m.copyLocal(out + m.rank * bytes, in + m.rank * bytes, bytes, stream);
  PairPlan plan;
  for (int p = 0; p < m.nRanks; ++p) {
    if (p != m.rank) m.addEntry(plan, p, in + p * bytes, bytes, out + p * bytes, bytes);
  }
  launchPairwise(m.dev, plan, stream);
}

void Collectives::allToAllv(const void* send, const std::vector<size_t>& sendCounts,
                            const std::vector<size_t>& sendDispls, void* recv, const std::vector<size_t>& recvCounts,
                            const std::vector<size_t>& recvDispls, DataType type, cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("allToAllv");
  const size_t n = static_cast<size_t>(m.nRanks);
  MSCCLPP_CHECK_USAGE(
      sendCounts.size() == n && sendDispls.size() == n && recvCounts.size() == n && recvDispls.size() == n,
      "allToAllv: counts and displacements need ", n, " entries each");
  MSCCLPP_CHECK_USAGE(sendCounts[m.rank] == recvCounts[m.rank], "allToAllv: this rank sends itself ",
                      sendCounts[m.rank], " elements but receives ", recvCounts[m.rank]);
  const size_t es = dataTypeSize(type);
  for (size_t p = 0; p < n; ++p) {
    m.segmentBytes(sendCounts[p], type, 1, "allToAllv send count");
    m.segmentBytes(sendDispls[p], type, 1, "allToAllv send displacement");
    m.segmentBytes(recvCounts[p], type, 1, "allToAllv receive count");
    m.segmentBytes(recvDispls[p], type, 1, "allToAllv receive displacement");
  }
  m.checkBuffer(send, 1, type, "allToAllv send");
  m.checkBuffer(recv, 1, type, "allToAllv recv");
  const char* in = static_cast<const char*>(send);
  char* out = static_cast<char*>(recv);
  m.copyLocal(out + recvDispls[m.rank] * es, in + sendDispls[m.rank] * es, sendCounts[m.rank] * es, stream);
  PairPlan plan;
  for (int p = 0; p < m.nRanks; ++p) {
    if (p == m.rank) continue;
    m.addEntry(plan, p, in + sendDispls[p] * es, sendCounts[p] * es, out + recvDispls[p] * es, recvCounts[p] * es);
  }
  launchPairwise(m.dev, plan, stream);
}

void Collectives::broadcast(const void* send, void* recv, size_t count, DataType type, int root, cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("broadcast");
  m.checkRoot(root, "broadcast");
  const size_t bytes = m.segmentBytes(count, type, 1, "broadcast");
  if (m.rank == root) m.checkBuffer(send, bytes, type, "broadcast send");
  m.checkBuffer(recv, bytes, type, "broadcast recv");
  if (count == 0) return;
  PeerBuffers outs;
  if (m.chooseFor(Collective::Broadcast, bytes, stream, {{recv, bytes, &outs}}).algorithm == Algorithm::CopyEngine) {
    launchCopyEngineBroadcast(m.dev, send, outs, bytes, root, stream);
    return;
  }
  PairPlan plan;
  if (m.rank == root) {
    m.copyLocal(recv, send, bytes, stream);
    for (int p = 0; p < m.nRanks; ++p) {
      if (p != root) m.addEntry(plan, p, send, bytes, nullptr, 0);
    }
  } else {
    m.addEntry(plan, root, nullptr, 0, recv, bytes);
  }
  launchPairwise(m.dev, plan, stream);
}

void Collectives::gather(const void* send, void* recv, size_t count, DataType type, int root, cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("gather");
  m.checkRoot(root, "gather");
  const size_t bytes = m.segmentBytes(count, type, m.nRanks, "gather");
  m.checkBuffer(send, bytes, type, "gather send");
  if (m.rank == root) m.checkBuffer(recv, bytes * m.nRanks, type, "gather recv");
  if (count == 0) return;
  PairPlan plan;
  if (m.rank == root) {
    char* out = static_cast<char*>(recv);
    m.copyLocal(out + root * bytes, send, bytes, stream);
    for (int p = 0; p < m.nRanks; ++p) {
      if (p != root) m.addEntry(plan, p, nullptr, 0, out + p * bytes, bytes);
    }
  } else {
    m.addEntry(plan, root, send, bytes, nullptr, 0);
  }
  launchPairwise(m.dev, plan, stream);
}

void Collectives::scatter(const void* send, void* recv, size_t count, DataType type, int root, cudaStream_t stream) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("scatter");
  m.checkRoot(root, "scatter");
  const size_t bytes = m.segmentBytes(count, type, m.nRanks, "scatter");
  if (m.rank == root) m.checkBuffer(send, bytes * m.nRanks, type, "scatter send");
  m.checkBuffer(recv, bytes, type, "scatter recv");
  if (count == 0) return;
  PairPlan plan;
  if (m.rank == root) {
    const char* in = static_cast<const char*>(send);
    m.copyLocal(recv, in + root * bytes, bytes, stream);
    for (int p = 0; p < m.nRanks; ++p) {
      if (p != root) m.addEntry(plan, p, in + p * bytes, bytes, nullptr, 0);
    }
  } else {
    m.addEntry(plan, root, nullptr, 0, recv, bytes);
  }
  launchPairwise(m.dev, plan, stream);
}

void Collectives::groupStart() {
  Impl& m = *pimpl_;
  MSCCLPP_CHECK_USAGE(!m.inGroup, "groupStart: a group is already open (groups do not nest)");
  m.inGroup = true;
  m.group.clear();
  m.groupStream = nullptr;
}

void Collectives::groupEnd() {
  Impl& m = *pimpl_;
  MSCCLPP_CHECK_USAGE(m.inGroup, "groupEnd without groupStart");
  m.inGroup = false;
  std::vector<Impl::P2POp> ops;
  ops.swap(m.group);
  if (ops.empty()) return;
  // The i-th send to a peer pairs with the i-th receive from it (the peer pairs them the same way).
  std::map<int, std::vector<const Impl::P2POp*>> sends, recvs;
  for (const Impl::P2POp& op : ops) (op.isSend ? sends : recvs)[op.peer].push_back(&op);
  PairPlan plan;
  for (int p = 0; p < m.nRanks; ++p) {
    const std::vector<const Impl::P2POp*>& s = sends[p];
    const std::vector<const Impl::P2POp*>& r = recvs[p];
    const size_t pairs = std::max(s.size(), r.size());
    for (size_t i = 0; i < pairs; ++i) {
      const Impl::P2POp* so = i < s.size() ? s[i] : nullptr;
      const Impl::P2POp* ro = i < r.size() ? r[i] : nullptr;
      if (p == m.rank) {
        MSCCLPP_CHECK_USAGE(so != nullptr && ro != nullptr && so->bytes == ro->bytes,
                            "a send to this rank itself needs a receive of the same size in the same group");
        m.copyLocal(ro->buf, so->buf, so->bytes, m.groupStream);
        continue;
      }
      m.addEntry(plan, p, so ? so->buf : nullptr, so ? so->bytes : 0, ro ? ro->buf : nullptr, ro ? ro->bytes : 0);
    }
  }
  launchPairwise(m.dev, plan, m.groupStream);
}

void Collectives::send(const void* buf, size_t count, DataType type, int peer, cudaStream_t stream) {
  Impl& m = *pimpl_;
  MSCCLPP_CHECK_USAGE(peer >= 0 && peer < m.nRanks, "send: peer ", peer, " out of [0, ", m.nRanks, ")");
  const size_t bytes = m.segmentBytes(count, type, 1, "send");
  m.checkBuffer(buf, bytes, type, "send");
  if (m.inGroup) {
    MSCCLPP_CHECK_USAGE(m.group.empty() || m.groupStream == stream, "send: every call of a group must use one stream");
    m.groupStream = stream;
    m.group.push_back({true, peer, const_cast<char*>(static_cast<const char*>(buf)), bytes});
    return;
  }
  MSCCLPP_CHECK_USAGE(peer != m.rank, "send to this rank itself outside a group would wait for itself");
  PairPlan plan;
  m.addEntry(plan, peer, buf, bytes, nullptr, 0);
  launchPairwise(m.dev, plan, stream);
}

void Collectives::recv(void* buf, size_t count, DataType type, int peer, cudaStream_t stream) {
  Impl& m = *pimpl_;
  MSCCLPP_CHECK_USAGE(peer >= 0 && peer < m.nRanks, "recv: peer ", peer, " out of [0, ", m.nRanks, ")");
  const size_t bytes = m.segmentBytes(count, type, 1, "recv");
  m.checkBuffer(buf, bytes, type, "recv");
  if (m.inGroup) {
    MSCCLPP_CHECK_USAGE(m.group.empty() || m.groupStream == stream, "recv: every call of a group must use one stream");
    m.groupStream = stream;
    m.group.push_back({false, peer, static_cast<char*>(buf), bytes});
    return;
  }
  MSCCLPP_CHECK_USAGE(peer != m.rank, "recv from this rank itself outside a group would wait for itself");
  PairPlan plan;
  m.addEntry(plan, peer, nullptr, 0, buf, bytes);
  launchPairwise(m.dev, plan, stream);
}

void Collectives::registerBuffer(void* ptr, size_t bytes) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("registerBuffer");
  m.registry.add(ptr, bytes);
}

void Collectives::deregisterBuffer(void* ptr) {
  Impl& m = *pimpl_;
  m.checkNotInGroup("deregisterBuffer");
  m.registry.remove(ptr);
}

}  // namespace collectives
}  // namespace mscclpp
