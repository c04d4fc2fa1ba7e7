// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Registration at graph capture: a collective captured into a CUDA graph on buffers that were never
// registered (registry.hpp) still runs zero-copy or on the copy engines. Capture is the one moment
// where the ranks can afford to meet on the host: the captured call exchanges over the bootstrap what
// each rank's buffers are, every rank maps the peers' allocations it does not hold yet, and the peers'
// pointers go into the kernel's parameters, so that every replay runs on them with no host work.
//
// Choices, and why they are correct:
// - The rule that makes the exchange safe is NCCL's rule for graphs: under capture, every rank captures
//   the same collectives in the same order. Whether a call exchanges follows from what is the same on
//   every rank (the explicit registrations, the configuration, the call's arguments), so every rank
//   reaches the exchange of a call together. Offers that describe different calls make every rank throw
//   Error(InvalidUsage) instead of mapping the wrong buffers.
// - The exchange is also the vote. Each rank offers, for every buffer the collective reads or writes in
//   its peers (the buffers Collectives asks the registry about), its allocation's identity
//   (BufferRegistry::identityOf: address range and buffer id), the buffer's offset in it, and whether it
//   can take part (device memory of this GPU inside one allocation, room under its bound, the export
//   worked). Every rank sees the same gathered offers, so when one rank cannot, every rank takes the path
//   it takes unregistered. A second vote after the mapping does the same for a rank that could not map a
//   peer's allocation, and every rank undoes what the exchange added: no rank runs on peers' buffers
//   unless every rank does, so no kernel waits for a peer that took another path.
// - A rank exports an allocation once. Every exchange involves every rank and either completes on every
//   rank or is undone on every rank, so an allocation its owner exported before is mapped by every peer,
//   and the allocations a rank has exported are the ones each peer maps of it. The bound on the former
//   (MSCCLPP_COLL_CAPTURE_CACHE) therefore bounds the mappings a rank holds of each peer.
// - The offset travels with the identity, unlike in the registry's same-offset rule: ranks' buffers may
//   sit at different offsets of their allocations (a caching allocator hands out pieces of large blocks),
//   and a peer's buffer is the peer's mapped allocation plus the offset that peer reported.
// - Mappings live until the Collectives object is destroyed, since a captured graph may be replayed at
//   any time. An owner that finds one of its exported allocations gone (its identity, buffer id included,
//   no longer answers at its address: freed, perhaps allocated again) says so at its next exchange, and
//   every rank drops that entry before it maps anything new: runtime IPC cannot map a new allocation of a
//   peer where a mapping of a freed one still lies, and a graph whose buffers were freed must not be
//   replayed anyway.
// - Explicit registrations are looked up first. The registry and this cache may both map one peer
//   allocation: both import through GpuIpcMem, which keeps one mapping per exported allocation in the
//   process and one runtime IPC opening per handle, so the second import shares the first.
// - No cache for calls that are not captured: all ranks must choose the same algorithm for a call, and a
//   rank cannot know whether its peers hold their buffers in such a cache; it would take a vote, a host
//   round trip, per call, which costs more than zero-copy saves at the sizes where it is chosen.
// - The exchange calls host APIs (IPC export and import, mapping and unmapping) that the global capture
//   mode forbids on a capturing thread: it runs in relaxed mode (AvoidCudaGraphCaptureGuard) and
//   enqueues nothing on any stream.

#ifndef MSCCLPP_EXT_COLLECTIVES_CAPTURE_REGISTRY_HPP_
#define MSCCLPP_EXT_COLLECTIVES_CAPTURE_REGISTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mscclpp/collectives.hpp>
#include <mscclpp/core.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ext/collectives/kernels.hpp"
#include "ext/collectives/registry.hpp"

namespace mscclpp {
namespace collectives {

using AllocationIdentity = BufferRegistry::Identity;

/// Buffers of one call that peers read or write: all-reduce's send and receive buffers, all-to-all's.
constexpr int kMaxCaptureBuffers = 2;

/// Why a rank cannot take part in a captured call's exchange.
enum class CaptureRefusal : int32_t {
  None = 0,           // it can
  NotShareable,       // a buffer is not device memory of its GPU, or the driver does not know its allocation
  OutsideAllocation,  // a buffer extends past the end of its allocation
  CacheFull,          // it has exported as many allocations as its bound allows
  ExportFailed,       // an allocation cannot be exported
};

/// What one rank tells every other about a captured call; gathered over the bootstrap, so of one size.
struct CaptureOffer {
  struct Buffer {
    uint64_t bufferId = 0;  // the allocation's identity (AllocationIdentity)
    uint64_t base = 0;
    uint64_t size = 0;
    uint64_t offset = 0;  // of the buffer in its allocation
  };
  int32_t refusal = 0;     // a CaptureRefusal
  int32_t collective = 0;  // a Collective
  uint64_t segBytes = 0;
  int32_t nBuffers = 0;
  int32_t reserved = 0;  // zero padding: offers travel as raw bytes, so no byte is left undefined
  Buffer buffers[kMaxCaptureBuffers];

  static AllocationIdentity identity(const Buffer& b) {
    AllocationIdentity id;
    id.bufferId = b.bufferId;
    id.base = static_cast<uintptr_t>(b.base);
    id.size = static_cast<size_t>(b.size);
    return id;
  }
};

/// The ranks' decision on a captured call, from every rank's offer (the same on every rank): "" when every
/// rank can take part, else why not (the first rank that cannot and its reason). Throws
/// Error(InvalidUsage) when the offers describe different calls (collective, size, number of buffers):
/// the ranks did not capture the same collectives in the same order.
std::string captureVerdict(const std::vector<CaptureOffer>& offers);

/// What an owner sends each peer after the offers: those of its exported allocations that are gone, and,
/// when every rank can take part, its allocations exported for the first time, each with its identity
/// and its serialized RegisteredMemory.
struct CaptureMessage {
  std::vector<AllocationIdentity> gone;
  std::vector<std::pair<AllocationIdentity, std::vector<char>>> fresh;
};
std::vector<char> encodeCaptureMessage(const CaptureMessage& message);
/// Throws Error(InvalidUsage) for bytes that are not an encoded CaptureMessage.
CaptureMessage decodeCaptureMessage(const std::vector<char>& bytes);

/// One rank's bookkeeping, without the exchange: the allocations it exported (which every peer maps) and
/// its mappings of every peer's, keyed by (peer, allocation identity). Pure host logic, tested without a
/// GPU.
class CaptureCache {
 public:
  /// At most `limit` exported allocations (0: none, capture-time registration is off).
  explicit CaptureCache(size_t limit) : limit_(limit) {}

  size_t limit() const { return limit_; }

  /// The distinct allocations among `allocations` that were not exported yet, in their first order.
  std::vector<AllocationIdentity> unexported(const std::vector<AllocationIdentity>& allocations) const;
  /// The exported allocations that `current` (the identity of the allocation now at an address, size 0
  /// for none) says are gone.
  std::vector<AllocationIdentity> gone(const std::function<AllocationIdentity(uintptr_t base)>& current) const;
  /// Whether `fresh` more exports fit under the bound once `retired` exports are dropped.
  bool fits(size_t retired, size_t fresh) const;
  void addExport(const AllocationIdentity& id, RegisteredMemory local);
  void removeExport(const AllocationIdentity& id);
  size_t exports() const { return exports_.size(); }

  /// This process's mapping of `peer`'s allocation `id`, or nullptr.
  const RegisteredMemory* mapping(int peer, const AllocationIdentity& id) const;
  void addMapping(int peer, const AllocationIdentity& id, RegisteredMemory mapped);
  void removeMapping(int peer, const AllocationIdentity& id);
  /// Mappings of every peer's allocations.
  size_t mappings() const { return mappings_.size(); }

 private:
  size_t limit_;
  std::map<AllocationIdentity, RegisteredMemory> exports_;
  std::map<std::pair<int, AllocationIdentity>, RegisteredMemory> mappings_;
};

/// One buffer of a call, and where its every-rank view goes.
struct CaptureBuffer {
  const void* ptr;
  size_t bytes;
  PeerBuffers* view;
};

/// The exchange of a Collectives object. Not thread-safe (the object is used by one thread at a time).
class CaptureRegistry {
 public:
  /// Over `comm`'s bootstrap, under bootstrap tag `tag`; at most `limit` exported allocations per rank.
  CaptureRegistry(std::shared_ptr<Communicator> comm, int tag, size_t limit);

  /// Whether calls may exchange at all (a bound above 0).
  bool enabled() const { return cache_.limit() > 0; }

  /// Whether work enqueued on `stream` now is being captured into a graph.
  static bool capturing(cudaStream_t stream);

  /// Collective, during capture: the exchange of one call of `collective` (segment `segBytes`) on
  /// `buffers` (at most kMaxCaptureBuffers). Returns true on every rank, with every buffer's view filled
  /// (each peer's mapped allocation plus the offset that peer gave), or false on every rank. Throws
  /// Error(InvalidUsage) on every rank when the ranks' calls differ.
  bool exchange(Collective collective, size_t segBytes, std::initializer_list<CaptureBuffer> buffers);

  /// Peer allocations mapped here, every peer's together.
  size_t mappings() const { return cache_.mappings(); }

 private:
  std::shared_ptr<Communicator> comm_;
  int tag_;
  int rank_;
  int nRanks_;
  CaptureCache cache_;
};

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_CAPTURE_REGISTRY_HPP_
