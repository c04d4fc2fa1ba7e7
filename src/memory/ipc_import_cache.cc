// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/ipc_import_cache.hpp"

#include "common/checks.hpp"

namespace mscclpp {

IpcImportCache& IpcImportCache::instance() {
  static IpcImportCache* cache = new IpcImportCache();
  return *cache;
}

std::shared_ptr<ImportedAllocation> IpcImportCache::acquire(const IpcImportKey& key, const Importer& importer) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& entry = slots_[key];
    if (!entry) entry = std::make_shared<Slot>();
    slot = entry;
    if (auto mapping = slot->mapping.lock()) {
      ++hits_;
      return mapping;
    }
  }
  // Importing may take a while (an fd fetch has a deadline): only imports of this key wait for it.
  std::lock_guard<std::mutex> importLock(slot->importMutex);
  if (auto mapping = slot->mapping.lock()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++hits_;
    return mapping;
  }
  std::unique_ptr<ImportedAllocation> made;
  try {
    made = importer();
    MSCCLPP_ASSERT(made, "an importer returned no mapping");
  } catch (...) {
    release(key, slot);
    throw;
  }
  // The deleter holds the slot weakly: the slot holds the mapping weakly, and a strong reference back
  // would keep both alive through the control block.
  std::weak_ptr<Slot> weakSlot = slot;
  std::shared_ptr<ImportedAllocation> mapping(made.release(), [this, key, weakSlot](ImportedAllocation* p) {
    delete p;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --live_;
    }
    if (auto s = weakSlot.lock()) release(key, s);
  });
  slot->mapping = mapping;
  std::lock_guard<std::mutex> lock(mutex_);
  ++imports_;
  ++live_;
  // The slot may have been dropped from the map while this import ran (its previous mapping died);
  // put it back unless a newer slot took its place.
  auto& entry = slots_[key];
  if (!entry) entry = slot;
  return mapping;
}

void IpcImportCache::release(const IpcImportKey& key, const std::shared_ptr<Slot>& slot) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(key);
  if (it != slots_.end() && it->second == slot && slot->mapping.expired()) slots_.erase(it);
}

IpcImportCacheStats IpcImportCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  IpcImportCacheStats s;
  s.liveMappings = live_;
  s.imports = imports_;
  s.hits = hits_;
  return s;
}

}  // namespace mscclpp
