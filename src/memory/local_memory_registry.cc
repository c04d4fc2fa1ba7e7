// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/local_memory_registry.hpp"

namespace mscclpp {

LocalMemoryRegistry::Registration& LocalMemoryRegistry::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (registry_) registry_->remove(id_);
    registry_ = other.registry_;
    id_ = other.id_;
    other.registry_ = nullptr;
  }
  return *this;
}

LocalMemoryRegistry::Registration::~Registration() {
  if (registry_) registry_->remove(id_);
}

LocalMemoryRegistry& LocalMemoryRegistry::instance() {
  // Never destroyed: registrations held by static objects may be released during exit.
  static LocalMemoryRegistry* registry = new LocalMemoryRegistry();
  return *registry;
}

LocalMemoryRegistry::Registration LocalMemoryRegistry::add(const void* ptr, size_t size, int deviceId,
                                                           TransportFlags transports) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t id = nextId_++;
  ranges_[id] = Range{reinterpret_cast<uintptr_t>(ptr), size, deviceId, transports};
  return Registration(this, id);
}

bool LocalMemoryRegistry::covers(uintptr_t addr, size_t size, int deviceId, TransportFlags transports) const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Ranges overlap freely (the same buffer may be registered many times), so scan; this runs only
  // when a process reads back its own memory.
  for (const auto& [id, range] : ranges_) {
    if (addr < range.base || size > range.size || addr - range.base > range.size - size) continue;
    if (range.deviceId == deviceId && (range.transports & transports) == transports) return true;
  }
  return false;
}

void LocalMemoryRegistry::remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  ranges_.erase(id);
}

}  // namespace mscclpp
