// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "transport/ethernet/ethernet_memory.hpp"

#include <utility>

#include "common/checks.hpp"

namespace mscclpp {

// How long deregistration waits, after failing the writes in flight, for them to stop. Their sockets
// are shut down, so each stops at its next system call; this bound only keeps a bug from hanging
// the caller.
constexpr std::chrono::seconds kAbortedWriteLimit(10);

EthernetMemoryRegistry::Lease::Lease(Lease&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)),
      id_(other.id_),
      writer_(other.writer_),
      range_(other.range_) {}

EthernetMemoryRegistry::Lease& EthernetMemoryRegistry::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = other.id_;
    writer_ = other.writer_;
    range_ = other.range_;
  }
  return *this;
}

void EthernetMemoryRegistry::Lease::release() noexcept {
  if (registry_) registry_->release(id_, writer_);
  registry_ = nullptr;
}

uint64_t EthernetMemoryRegistry::add(const void* ptr, size_t size, int deviceId) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t id = nextId_++;
  entries_[id].range = Range{reinterpret_cast<uintptr_t>(ptr), size, deviceId};
  return id;
}

EthernetMemoryRegistry::Lease EthernetMemoryRegistry::acquire(uintptr_t addr, size_t size,
                                                              EthernetWriteTarget* writer) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Ranges overlap freely (one buffer may be registered many times), so scan; registrations of one
  // Context are few and this runs once per incoming message.
  for (auto& [id, entry] : entries_) {
    const Range& r = entry.range;
    if (entry.removed || addr < r.base || size > r.size || addr - r.base > r.size - size) continue;
    entry.writers.insert(writer);
    return Lease(this, id, writer, r);
  }
  return Lease();
}

void EthernetMemoryRegistry::release(uint64_t id, EthernetWriteTarget* writer) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  auto w = it->second.writers.find(writer);
  if (w != it->second.writers.end()) it->second.writers.erase(w);
  if (it->second.writers.empty()) released_.notify_all();
}

void EthernetMemoryRegistry::remove(uint64_t id) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  entry.removed = true;
  auto idle = [&] { return entry.writers.empty(); };
  if (!released_.wait_for(lock, kDeregisterGrace, idle)) {
    LOG_WARN(CONN, "Ethernet: memory at 0x", std::hex, entry.range.base, std::dec, " (", entry.range.size,
             " bytes) was deregistered while ", entry.writers.size(), " write(s) into it were in flight; failing them");
    // Under the lock, so that no lease can end (and its connection go away) while it is told.
    for (EthernetWriteTarget* writer : std::set<EthernetWriteTarget*>(entry.writers.begin(), entry.writers.end())) {
      writer->abortWrite(concat("the destination memory at 0x", std::hex, entry.range.base,
                                " was deregistered while a write into it was in flight"));
    }
    if (!released_.wait_for(lock, kAbortedWriteLimit, idle)) {
      LOG_ERROR(CONN, "Ethernet: writes into deregistered memory at 0x", std::hex, entry.range.base,
                " did not stop after they were failed");
    }
  }
  entries_.erase(it);
}

}  // namespace mscclpp
