// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_LOCAL_MEMORY_REGISTRY_HPP_
#define MSCCLPP_MEMORY_LOCAL_MEMORY_REGISTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace mscclpp {

/// The ranges of this process's memory that peers may write into: every RegisteredMemory made here
/// registers its range for its lifetime. Transports whose peer names a destination address (Ethernet)
/// check it against this registry first, so a confused or hostile peer cannot write anywhere else.
/// Thread-safe.
class LocalMemoryRegistry {
 public:
  struct Range {
    uintptr_t base;
    size_t size;
    int deviceId;  // -1: host memory
  };

  /// Keeps a range registered while alive. Move-only.
  class Registration {
   public:
    Registration() = default;
    Registration(LocalMemoryRegistry* registry, uint64_t id) : registry_(registry), id_(id) {}
    Registration(Registration&& other) noexcept : registry_(other.registry_), id_(other.id_) { other.registry_ = nullptr; }
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration();

   private:
    LocalMemoryRegistry* registry_ = nullptr;
    uint64_t id_ = 0;
  };

  static LocalMemoryRegistry& instance();

  Registration add(const void* ptr, size_t size, int deviceId);

  /// The registered range containing all of [addr, addr+size), if any.
  std::optional<Range> find(uintptr_t addr, size_t size) const;

 private:
  void remove(uint64_t id);

  mutable std::mutex mutex_;
  uint64_t nextId_ = 1;
  std::map<uint64_t, Range> ranges_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_LOCAL_MEMORY_REGISTRY_HPP_
