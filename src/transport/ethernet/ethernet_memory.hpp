// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Which memory an Ethernet peer may write into. A peer names its destination by address, so the
// receiver must check it: only memory registered for Ethernet, by the Context that owns the
// connection, and only while that registration lives. A write checked at its header streams its
// payload in afterwards, so each write holds a lease on its range until its last byte has landed
// (in GPU memory: until the copies are complete), and deregistration waits for the leases, failing
// the writes that do not finish within a grace period. When deregistration returns, no byte of a
// write from a peer can land in that memory any more.

#ifndef MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_MEMORY_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_MEMORY_HPP_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "memory/transport_memory.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

/// The side of a connection that writes into leased memory: told to stop when the memory goes.
class EthernetWriteTarget {
 public:
  virtual ~EthernetWriteTarget() = default;
  /// Makes the write in flight fail at once (its socket is shut down). Called with the registry's
  /// lock held: it must not call back into the registry.
  virtual void abortWrite(const std::string& why) noexcept = 0;
};

/// One Context's memory registered for Ethernet. Thread-safe.
class EthernetMemoryRegistry {
 public:
  /// How long deregistration waits for writes in flight before failing them.
  static constexpr std::chrono::milliseconds kDeregisterGrace{200};

  struct Range {
    uintptr_t base;
    size_t size;
    int deviceId;  // -1: host memory
  };

  /// Keeps a write into one range allowed while alive. Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }

    explicit operator bool() const { return registry_ != nullptr; }
    const Range& range() const { return range_; }
    void release() noexcept;

   private:
    friend class EthernetMemoryRegistry;
    Lease(EthernetMemoryRegistry* registry, uint64_t id, EthernetWriteTarget* writer, Range range)
        : registry_(registry), id_(id), writer_(writer), range_(range) {}
    EthernetMemoryRegistry* registry_ = nullptr;
    uint64_t id_ = 0;
    EthernetWriteTarget* writer_ = nullptr;
    Range range_{};
  };

  uint64_t add(const void* ptr, size_t size, int deviceId);
  /// Stops new writes into the range at once, waits up to kDeregisterGrace for those in flight, then
  /// fails the rest and waits until they have stopped. Never throws.
  void remove(uint64_t id) noexcept;
  /// A lease on a live range holding all of [addr, addr+size), for `writer`; empty if there is none.
  Lease acquire(uintptr_t addr, size_t size, EthernetWriteTarget* writer);

 private:
  struct Entry {
    Range range;
    bool removed = false;
    std::multiset<EthernetWriteTarget*> writers;  // one per lease
  };
  void release(uint64_t id, EthernetWriteTarget* writer) noexcept;

  std::mutex mutex_;
  std::condition_variable released_;
  uint64_t nextId_ = 1;
  std::map<uint64_t, Entry> entries_;
};

/// Ethernet's per-Context state: the Context's registry.
class EthernetContextState : public TransportContextState {
 public:
  std::shared_ptr<EthernetMemoryRegistry> registry = std::make_shared<EthernetMemoryRegistry>();
};

/// Ethernet's entry in a RegisteredMemory made here: keeps the range registered while the memory's
/// last copy lives. Adds nothing to the serialized form.
class EthernetLocalMemory : public TransportMemory {
 public:
  EthernetLocalMemory(std::shared_ptr<EthernetMemoryRegistry> registry, uint64_t id)
      : registry_(std::move(registry)), id_(id) {}
  ~EthernetLocalMemory() override { registry_->remove(id_); }
  Transport transport() const override { return Transport::Ethernet; }
  void serialize(ByteWriter&) const override {}

 private:
  std::shared_ptr<EthernetMemoryRegistry> registry_;
  uint64_t id_;
};

/// Ethernet's entry in a peer's deserialized RegisteredMemory: nothing to map.
class EthernetRemoteMemory : public TransportMemory {
 public:
  Transport transport() const override { return Transport::Ethernet; }
  void serialize(ByteWriter&) const override {}
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_MEMORY_HPP_
