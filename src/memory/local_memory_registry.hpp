// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_LOCAL_MEMORY_REGISTRY_HPP_
#define MSCCLPP_MEMORY_LOCAL_MEMORY_REGISTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mscclpp/core.hpp>
#include <mutex>

namespace mscclpp {

/// The ranges of this process's memory that are registered: every RegisteredMemory made here records
/// its range, GPU and transports for its lifetime. RegisteredMemory::deserialize checks bytes that
/// claim to come from this very process against it, so they cannot name an arbitrary pointer. (Which
/// memory a peer may write into is each transport's own, per-Context business: Ethernet keeps its own
/// registry, transport/ethernet/ethernet_memory.hpp.) Thread-safe.
class LocalMemoryRegistry {
 public:
  struct Range {
    uintptr_t base;
    size_t size;
    int deviceId;  // -1: host memory
    TransportFlags transports;
  };

  /// Keeps a range registered while alive. Move-only.
  class Registration {
   public:
    Registration() = default;
    Registration(LocalMemoryRegistry* registry, uint64_t id) : registry_(registry), id_(id) {}
    Registration(Registration&& other) noexcept : registry_(other.registry_), id_(other.id_) {
      other.registry_ = nullptr;
    }
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration();

   private:
    LocalMemoryRegistry* registry_ = nullptr;
    uint64_t id_ = 0;
  };

  static LocalMemoryRegistry& instance();

  Registration add(const void* ptr, size_t size, int deviceId, TransportFlags transports);

  /// Whether one registration holds all of [addr, addr+size), on GPU `deviceId` (-1: host), for at
  /// least `transports`.
  bool covers(uintptr_t addr, size_t size, int deviceId, TransportFlags transports) const;

 private:
  void remove(uint64_t id);

  mutable std::mutex mutex_;
  uint64_t nextId_ = 1;
  std::map<uint64_t, Range> ranges_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_LOCAL_MEMORY_REGISTRY_HPP_
