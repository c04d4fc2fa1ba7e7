// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Collective operations over a group of ranks: all-reduce, all-gather, reduce-scatter, broadcast,
// reduce, all-to-all(-v), gather, scatter and point-to-point send/recv, on GPU buffers, enqueued on a
// CUDA stream. This is the C++ entry point under the NCCL API (nccl.h); it knows nothing
// of NCCL's types. docs/collectives.md describes the algorithms and how one is chosen.
//
// Choices, and why:
// - One object per group of ranks (`Collectives`), built from a Communicator, owning every resource
//   the kernels need (connections, scratch, flags). Setup is paid once, at construction, so that no
//   call on the hot path allocates, registers memory or talks to the host of a peer. That is what
//   makes every call capturable into a CUDA graph.
// - Zero-copy on buffers that were not registered, under graph capture only (capture-time
//   registration; MSCCLPP_COLL_CAPTURE_CACHE=0 turns it off): a captured call meets its peers on the host
//   once, at capture, to map their buffers (see Collectives), and every replay runs on them. Calls that
//   are not captured do not: every rank must choose the same algorithm for a call, and a rank cannot know
//   whether its peers' buffers are mapped without a host round trip per call, which costs more than
//   zero-copy saves.
// - Our own DataType enum in the `collectives` namespace with NCCL's numbering (Int8 = 0 ...
//   Fp8E5M2 = 11): a cast converts ncclDataType_t, and mscclpp::DataType (gpu_data_types.hpp), which
//   the executor switches over, stays as the reference has it. One table inside the library
//   describes both enums' types.
// - ReduceOp is a value carrying its scalar, not a handle registered in the object: PreMulSum then
//   needs no per-communicator table, and a NCCL layer maps its dynamic ops onto values it stores.
// - Counts are in elements and sizes follow NCCL's conventions (allGather's count is the count each
//   rank contributes; reduceScatter's is the count each rank receives), so a NCCL layer passes
//   arguments through unchanged.
// - Errors are thrown as mscclpp::Error (InvalidUsage for bad arguments), never returned as codes:
//   the library has one error model; the NCCL layer translates at its boundary.

#ifndef MSCCLPP_COLLECTIVES_HPP_
#define MSCCLPP_COLLECTIVES_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core.hpp"
#include "gpu.hpp"
#include "gpu_data_types.hpp"

namespace mscclpp {
namespace collectives {

/// Element type of a collective's buffers, numbered as ncclDataType_t.
enum class DataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
  Fp8E4M3 = 10,
  Fp8E5M2 = 11,
};

/// Number of DataType values.
constexpr int NumDataTypes = 12;

/// Bytes of one element of `type`.
size_t dataTypeSize(DataType type);

/// "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
/// "f8e4m3", "f8e5m2" (the names nccl-tests prints).
const char* dataTypeName(DataType type);

/// Reduction operator. Sum, Prod, Max, Min as usual. Avg: the sum divided by the number of ranks
/// (integer division for integer types, as NCCL does). PreMulSum: the sum of every rank's input
/// multiplied by a scalar first; the scalar is either a host value fixed when the op is made, or a
/// device pointer read by the kernel each time it runs (so a captured graph sees later updates).
struct ReduceOp {
  enum class Kind : int { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4, PreMulSum = 5 };
  enum class ScalarResidence : int { None, Host, Device };

  Kind kind = Kind::Sum;
  ScalarResidence residence = ScalarResidence::None;
  /// With ScalarResidence::Host: the scalar, stored in the buffer's element type (its first
  /// dataTypeSize bytes are used).
  uint64_t hostScalarBits = 0;
  /// With ScalarResidence::Device: device pointer to one element of the buffer's type.
  const void* deviceScalar = nullptr;

  ReduceOp() = default;
  /// Sum, Prod, Max, Min or Avg; PreMulSum needs one of the factories below.
  ReduceOp(Kind kind);

  /// PreMulSum with a host scalar: `scalar` points to one element of `type`, copied now.
  static ReduceOp preMulSumHost(const void* scalar, DataType type);
  /// PreMulSum with a scalar in device memory, read by every launch.
  static ReduceOp preMulSumDevice(const void* deviceScalar);
};

/// "sum", "prod", "max", "min", "avg", "premulsum".
const char* reduceOpName(ReduceOp::Kind kind);

/// The collective operations, for selection and reporting.
enum class Collective : int {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  AllToAllv,
  Gather,
  Scatter,
  SendRecv,
};

const char* collectiveName(Collective collective);

/// The algorithms a collective can run with (docs/collectives.md says which collective has which).
/// - Auto: chosen by message size and rank count (selectAlgorithm).
/// - LLOneShot: every rank sends its whole contribution to every peer as LL packets (data and flag in
///   one store); each rank combines what it received. One hop, no barrier: for small messages.
/// - Staged: data moves through the peers' registered scratch in rounds separated by flag barriers,
///   chunked to the scratch size; every collective has it, and it handles any size.
/// - LLTwoShot: all-reduce only. Each rank sends chunk p of its input to rank p as LL packets; rank p
///   reduces its chunk and sends the result to every rank as LL packets. No barrier: for the sizes
///   between one-shot and the bandwidth paths (up to 1 MiB).
/// - ZeroCopy: all-reduce, reduce-scatter and all-gather on buffers registered with registerBuffer, or in
///   a call captured into a CUDA graph with capture-time registration on (see Collectives): the kernel
///   reads the peers' inputs and writes the peers' outputs in place, with no scratch (the all-reduce in
///   one pass: each rank reduces its chunk of every input and stores it into every output). Not for
///   PreMulSum. Asked for on unregistered buffers not mapped at capture, the call runs Staged. Auto takes it
///   on registered buffers from sizes that depend on the rank count (docs/collectives.md, Selection).
/// - CopyEngine: all-gather, broadcast and (out of place) all-to-all into registered receive buffers (or,
///   with capture-time registration on, those of a captured call): cudaMemcpyAsync on the caller's stream
///   straight into the peers' buffers, between two one-block barrier kernels, so no SM moves data. For
///   large messages (Auto: all-gathers of 2 ranks and all-to-alls from 16 MiB parts, broadcasts from 8
///   MiB); on unregistered buffers not mapped at capture the call runs Staged.
enum class Algorithm : int { Auto, LLOneShot, Staged, ZeroCopy, LLTwoShot, CopyEngine };

const char* algorithmName(Algorithm algorithm);

/// Construction options. Zero or empty means "the default", which environment variables may set
/// (docs/collectives.md lists them; an explicit field here wins over the environment).
struct Config {
  /// Bytes of scratch per rank for the staged path (default 64 MiB, MSCCLPP_COLL_SCRATCH_BYTES).
  size_t scratchBytes = 0;
  /// Most thread blocks one launch uses (default: fits N ranks' kernels on the GPU together,
  /// MSCCLPP_COLL_MAX_BLOCKS).
  int maxBlocks = 0;
  /// Largest message (bytes per rank's contribution) the LL one-shot path takes under Auto
  /// (MSCCLPP_COLL_LL_MAX_BYTES).
  size_t llMaxBytes = 0;
  /// Forces one algorithm for every collective that has it (MSCCLPP_COLL_ALGO=ll|ll2|staged|zerocopy|ce).
  Algorithm forceAlgorithm = Algorithm::Auto;
  /// When set, asked first for every call with the collective, the per-pair segment bytes and the
  /// rank count; returning Auto leaves the choice to the table. Must answer the same on every rank.
  std::function<Algorithm(Collective, size_t, int)> selector;
  /// A tuning table written by `mscclpp-coll-bench -T <file>` (docs/collectives.md, Tuning), read by
  /// rank 0 at construction and sent to every rank; asked after `selector` and `forceAlgorithm`, before
  /// Auto's own table (MSCCLPP_COLL_TUNING_FILE). Construction throws Error(InvalidUsage) on every rank
  /// when rank 0 cannot read it or a line is not a rule.
  std::string tuningFile;
};

/// One rank's view of a group of ranks that run collectives together.
///
/// Construction is collective: every rank of the Communicator's bootstrap constructs one, with the
/// same Config, in the same order relative to other collective setup. All ranks must be on one host
/// (they connect over CudaIpc); construction throws Error(InvalidUsage) otherwise.
///
/// Stream semantics: each call enqueues its work on `stream` and returns without waiting for it; the
/// result is in the output buffer when the stream reaches that point. Every rank must issue the same
/// sequence of collective calls (same collective, count, type, op, root) on its object; send/recv
/// need only the pair to agree. The calls of one object must execute on the GPU in the order they
/// were issued: use one stream per object, or order the streams with events. Two collectives meant
/// to be in flight at once use two objects (built on two Communicators, or on one with different
/// construction order). Every call may be captured into a CUDA graph and the graph replayed any
/// number of times; the replays count as calls in the sequence.
///
/// Graph capture: every rank must capture the same collectives in the same order (as NCCL requires for
/// graphs), on the same object. With capture-time registration on (MSCCLPP_COLL_CAPTURE_CACHE above 0,
/// as by default), a call that would run ZeroCopy or CopyEngine if its buffers were registered, on
/// buffers that are not, meets every rank on the host while it is captured: each rank maps the
/// allocations holding its peers' buffers (once per allocation; ranks' buffers may lie at different
/// offsets of their allocations), and the graph runs on them. If any rank cannot (a buffer not in device
/// memory of its GPU, its bound reached, an export or a mapping that fails), the call is captured as on
/// unregistered buffers on every rank. Each rank lets its peers map at most MSCCLPP_COLL_CAPTURE_CACHE of
/// its allocations (default 256); 0 turns capture-time registration off. The mappings last until
/// this object is destroyed: replaying a graph after destroying the object, or after freeing a buffer
/// captured in it, is an error, as with any graph. Peers keep a freed buffer mapped until its owner's
/// next captured call on this object, which may keep a new allocation at that address from being mapped
/// meanwhile (docs/collectives.md): free captured buffers after destroying the object, or keep them.
/// Calls that are not captured never do this (no host round trip per call).
///
/// Buffers: device memory of this rank's GPU, aligned to the element size (Error(InvalidUsage)
/// otherwise), any count (0 is a no-op) up to buffers of 2^56 bytes (a count whose buffer would be
/// larger, wrapping or not, throws Error(InvalidUsage) before anything is launched). In-place
/// operation is allowed where NCCL allows it (send == recv, or for allGather/reduceScatter the
/// rank's slice of the larger buffer).
///
/// Thread-safety: not thread-safe; one thread issues the calls of an object at a time. Distinct
/// objects are independent.
class Collectives {
 public:
  Collectives(std::shared_ptr<Communicator> communicator, const Config& config = {});
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const;
  int nRanks() const;
  /// The configuration after defaults and environment variables were applied.
  const Config& config() const;

  /// recv[i] = op over ranks of send[i], for i < count. The combination order of an element is the
  /// same on every rank, so every rank gets bit-identical results.
  void allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, cudaStream_t stream);
  /// recv[r*count + i] = rank r's send[i].
  void allGather(const void* send, void* recv, size_t count, DataType type, cudaStream_t stream);
  /// recv[i] = op over ranks of send[rank*count + i], for i < count (send holds nRanks*count).
  void reduceScatter(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                     cudaStream_t stream);
  /// recv[i] = root's send[i] on every rank (send is read on the root only).
  void broadcast(const void* send, void* recv, size_t count, DataType type, int root, cudaStream_t stream);
  /// On the root, recv[i] = op over ranks of send[i]; recv is not touched elsewhere.
  void reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
              cudaStream_t stream);
  /// recv[r*count + i] = rank r's send[rank*count + i] (count elements per pair).
  void allToAll(const void* send, void* recv, size_t count, DataType type, cudaStream_t stream);
  /// Rank r's send + sendDispls[p] (sendCounts[p] elements) lands at rank p's recv + recvDispls[r];
  /// recvCounts[r] on p must equal sendCounts[p] on r. Vectors have nRanks entries, in elements.
  void allToAllv(const void* send, const std::vector<size_t>& sendCounts, const std::vector<size_t>& sendDispls,
                 void* recv, const std::vector<size_t>& recvCounts, const std::vector<size_t>& recvDispls,
                 DataType type, cudaStream_t stream);
  /// On the root, recv[r*count + i] = rank r's send[i].
  void gather(const void* send, void* recv, size_t count, DataType type, int root, cudaStream_t stream);
  /// recv[i] = root's send[rank*count + i].
  void scatter(const void* send, void* recv, size_t count, DataType type, int root, cudaStream_t stream);

  /// Sends count elements to `peer`, which calls recv with this rank, the same count and type.
  /// Outside a group each call is issued at once, so a pair that sends to each other must group
  /// their send and recv (groupStart/groupEnd) or order them (one sends first) to avoid deadlock.
  void send(const void* buf, size_t count, DataType type, int peer, cudaStream_t stream);
  void recv(void* buf, size_t count, DataType type, int peer, cudaStream_t stream);

  /// Between groupStart and groupEnd, send and recv are recorded, not issued; groupEnd issues all of
  /// them as one launch, which progresses every one together, so no order of them deadlocks. Every
  /// send/recv of a group must name the same stream. Groups do not nest; collectives may not be
  /// called inside one (Error(InvalidUsage)).
  void groupStart();
  void groupEnd();

  /// Collective (every rank, same order relative to other registrations): maps [ptr, ptr + bytes) of
  /// every rank into every rank, so that all-reduce, reduce-scatter and all-gather on buffers inside it
  /// run ZeroCopy above the LL sizes (large all-gathers and broadcasts CopyEngine). A call takes the zero-copy path
  /// when its buffers lie inside one registration; every rank must then pass buffers of the same registration at the
  /// same offset from the registered pointer (as NCCL's symmetric windows require), which is how the ranks agree on the
  /// path without asking each other. Throws Error(InvalidUsage) on every rank, registering nothing, when any rank's
  /// buffer is null, empty, not device memory of the current GPU, overlaps one of its registrations or cannot be
  /// exported, when ranks register different sizes, or when a rank cannot map a peer's buffer. Not inside a CUDA graph
  /// capture.
  void registerBuffer(void* ptr, size_t bytes);
  /// Collective: removes the registration made with `ptr`. Waits for this rank's device work first and
  /// meets every rank, so that no kernel of any rank still uses the buffer when this returns and it
  /// may be freed. Graphs captured with the buffer must not be replayed after. Throws
  /// Error(InvalidUsage) on every rank, removing nothing, when any rank names no registration or ranks
  /// name different ones. A registered buffer freed without this makes its owner's next call on it
  /// throw Error(InvalidUsage) (the allocation's id changed); its peers then wait at that call.
  void deregisterBuffer(void* ptr);

  /// The algorithm a call of `collective` with `bytes` per rank's contribution would run with, on
  /// registered buffers or not (a captured call whose buffers were registered at capture counts as
  /// registered).
  Algorithm algorithmFor(Collective collective, size_t bytes, bool registered = false) const;

  /// How many of the peers' allocations this rank has mapped for captured calls (capture-time
  /// registration), every peer's together: a captured call that maps a peer allocation not mapped
  /// before adds one, and one goes when its owner reports, at a later captured call, that it was freed.
  size_t captureMappings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> pimpl_;
};

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_COLLECTIVES_HPP_
