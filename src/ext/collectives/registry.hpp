// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// User buffers registered for zero-copy collectives: each registration maps every rank's buffer into
// every rank's process, so that a kernel reads and writes peers' buffers in place (zero_copy.cu).
//
// Choices, and why:
// - Registration and deregistration are collective and ordered, like NCCL's window registration: every
//   rank runs the same registrations in the same order, so the tables of all ranks hold the same
//   entries. Each call first gathers every rank's verdict on its own arguments; when one rank refuses,
//   every rank throws and the tables stay as they were.
// - Agreement per call without a round trip: a call finds its buffers in its own table only. Every rank
//   must pass buffers of the same registration at the same offset from the registered pointer (NCCL's
//   rule for symmetric windows): then every rank finds the same entry and takes the same path, and a
//   peer's buffer is the peer's registered pointer plus that offset.
// - The allocation's identity (its address range and, where the driver has one, its buffer id, which
//   is never reused within a process) is recorded at registration and checked at every call that finds
//   the buffer. A registered buffer freed without deregistration, even if a new
//   allocation now sits at the same address, makes that call throw Error(InvalidUsage) on its owner
//   instead of letting peers write into memory the owner has handed out again.
// - Deregistration synchronizes this rank's device and then meets every rank before any mapping is
//   released, so no kernel of any rank still uses the buffer when its owner may free it.

#ifndef MSCCLPP_EXT_COLLECTIVES_REGISTRY_HPP_
#define MSCCLPP_EXT_COLLECTIVES_REGISTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mscclpp/core.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "ext/collectives/kernels.hpp"

namespace mscclpp {
namespace collectives {

class BufferRegistry {
 public:
  /// Registrations over `comm`, whose bootstrap gathers verdicts; `tag` is the bootstrap tag of the
  /// memory exchange.
  BufferRegistry(std::shared_ptr<Communicator> comm, int tag);

  /// Collective: registers [ptr, ptr + bytes) of every rank. Throws Error(InvalidUsage) on every rank
  /// when any rank's buffer is null, empty, not device memory of this GPU, overlaps a registration or
  /// cannot be exported, when ranks register different sizes, or when a rank cannot map a peer's.
  void add(void* ptr, size_t bytes);

  /// Collective: removes the registration whose registered pointer is `ptr`. Throws Error(InvalidUsage)
  /// on every rank when any rank names no registration or ranks name different ones.
  void remove(void* ptr);

  /// When [ptr, ptr + bytes) lies inside one registration: fills `view` with every rank's pointer at the
  /// same offset and returns true. Throws Error(InvalidUsage) when the registered allocation was freed.
  bool find(const void* ptr, size_t bytes, PeerBuffers& view) const;

  /// Number of registrations.
  size_t size() const { return entries_.size(); }

  /// What identifies the allocation holding a pointer; size 0 when the driver does not know it.
  struct Identity {
    unsigned long long bufferId = 0;
    uintptr_t base = 0;
    size_t size = 0;
    bool operator==(const Identity& o) const { return bufferId == o.bufferId && base == o.base && size == o.size; }
    bool operator!=(const Identity& o) const { return !(*this == o); }
    bool operator<(const Identity& o) const {
      return std::tie(base, size, bufferId) < std::tie(o.base, o.size, o.bufferId);
    }
  };
  static Identity identityOf(const void* ptr);

 private:
  struct Entry {
    size_t bytes = 0;
    uint64_t serial = 0;  // the registration's place in the sequence, the same on every rank
    Identity allocation;
    RegisteredMemory local;
    std::vector<RegisteredMemory> peers;  // by rank; empty at this rank
    PeerBuffers starts;                   // every rank's registered pointer, mapped here
  };

  std::shared_ptr<Communicator> comm_;
  int tag_;
  int rank_;
  int nRanks_;
  uint64_t nextSerial_ = 0;
  std::map<uintptr_t, Entry> entries_;  // by registered pointer
};

// What the registry and the capture-time registration (capture_registry.hpp) share: both exchange
// whole memories over the bootstrap, rank by rank, and let every rank's verdict decide for all.

/// Every rank's `mine`, gathered over `bootstrap` (entry q is rank q's).
std::vector<int64_t> gatherFromEveryRank(Bootstrap& bootstrap, int64_t mine);

/// Why this rank cannot share [ptr, ptr + bytes) with its peers, or "" when it can: the buffer is null
/// or empty, not device memory, on another GPU than the current one, or in an allocation the driver
/// does not know.
std::string shareRefusal(const void* ptr, size_t bytes);

/// Sends `mine` to every peer under `tag` and takes one message from every peer (entry q is rank q's;
/// this rank's stays empty). Every peer's message is taken, whatever it holds, so that none is left for
/// the next exchange under the tag. Straight through the bootstrap, not Communicator::sendMemory: the
/// caller owns every mapping it makes of what it receives, so that a mapping ends with its owner (runtime
/// IPC maps an allocation once per process: a mapping that outlived its use would keep a new allocation
/// the peer makes at the same place from being mapped again).
std::vector<std::vector<char>> swapWithPeers(Bootstrap& bootstrap, const std::vector<char>& mine, int tag);

/// `serialized` (a RegisteredMemory of rank `peer`) mapped here, or an empty RegisteredMemory when it
/// cannot be; then `firstFailure`, if still empty, says why.
RegisteredMemory mapPeerMemory(const std::vector<char>& serialized, int peer, std::string& firstFailure);

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_REGISTRY_HPP_
