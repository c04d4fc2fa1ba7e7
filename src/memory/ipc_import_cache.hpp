// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The import cache: a process maps each remote allocation once. Imports are keyed by the exporter's
// host, process and allocation identity and shared by reference count, so N semaphores whose tokens
// live in one pool chunk of a peer cost one fd fetch and one mapping, not N.

#ifndef MSCCLPP_MEMORY_IPC_IMPORT_CACHE_HPP_
#define MSCCLPP_MEMORY_IPC_IMPORT_CACHE_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "memory/gpu_ipc_mem.hpp"

namespace mscclpp {

/// One mapping in this process of a peer's whole allocation. Subclasses own the mapping (one per way
/// of importing) and undo it in their destructor, which never throws.
class ImportedAllocation {
 public:
  ImportedAllocation(void* base, size_t size, GpuIpcMemHandle::Type typeUsed)
      : base_(base), size_(size), typeUsed_(typeUsed) {}
  virtual ~ImportedAllocation() = default;
  ImportedAllocation(const ImportedAllocation&) = delete;
  ImportedAllocation& operator=(const ImportedAllocation&) = delete;

  void* base() const { return base_; }
  size_t size() const { return size_; }
  GpuIpcMemHandle::Type typeUsed() const { return typeUsed_; }
  const std::string& attemptLog() const { return attemptLog_; }
  void setAttemptLog(std::string log) { attemptLog_ = std::move(log); }

 private:
  void* base_;
  size_t size_;
  GpuIpcMemHandle::Type typeUsed_;
  std::string attemptLog_;
};

struct IpcImportKey {
  uint64_t hostHash;
  uint64_t processHash;
  uint64_t allocationId;
  bool operator<(const IpcImportKey& o) const {
    return std::tie(hostHash, processHash, allocationId) < std::tie(o.hostHash, o.processHash, o.allocationId);
  }
};

struct IpcImportCacheStats {
  size_t liveMappings = 0;  // remote allocations mapped now
  uint64_t imports = 0;     // mappings made since the process started
  uint64_t hits = 0;        // opens served by an existing mapping
};

/// Thread-safe. Imports of different keys run concurrently; two imports of one key map once.
class IpcImportCache {
 public:
  using Importer = std::function<std::unique_ptr<ImportedAllocation>()>;

  /// The process-wide cache (never destroyed, so mappings released during exit still find it).
  static IpcImportCache& instance();

  /// The live mapping for `key`, or a new one made by `importer` (whose exception propagates).
  std::shared_ptr<ImportedAllocation> acquire(const IpcImportKey& key, const Importer& importer);

  IpcImportCacheStats stats() const;

 private:
  struct Slot {
    std::mutex importMutex;  // serializes imports of this key
    std::weak_ptr<ImportedAllocation> mapping;
  };
  void release(const IpcImportKey& key, const std::shared_ptr<Slot>& slot) noexcept;

  mutable std::mutex mutex_;
  std::map<IpcImportKey, std::shared_ptr<Slot>> slots_;
  size_t live_ = 0;
  uint64_t imports_ = 0;
  uint64_t hits_ = 0;
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_IPC_IMPORT_CACHE_HPP_
