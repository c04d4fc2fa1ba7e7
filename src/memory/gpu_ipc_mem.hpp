// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Sharing GPU memory with other processes (docs/memory.md).
//
// GpuIpcExport turns local GPU memory into a GpuIpcMemHandle offering every way in that the memory
// allows and the configuration permits: runtime IPC for cudaMalloc memory, a POSIX fd (served by this
// process's fd service) and a fabric handle for cuMem memory. GpuIpcMem::open maps a peer's handle,
// trying Fabric, then PosixFd, then RuntimeIpc, and records why each attempt failed; the import cache
// maps each remote allocation once per process however many handles point into it.

#ifndef MSCCLPP_MEMORY_GPU_IPC_MEM_HPP_
#define MSCCLPP_MEMORY_GPU_IPC_MEM_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mscclpp/gpu.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>

#include "bootstrap/fd_service.hpp"
#include "common/serialization.hpp"

namespace mscclpp {

/// Everything a peer needs to map a piece of this process's GPU memory. Trivially copyable, fixed size,
/// without padding (every byte is defined), written raw inside a serialized RegisteredMemory.
struct GpuIpcMemHandle {
  enum Type : uint8_t { None = 0, RuntimeIpc = 1, PosixFd = 2, Fabric = 4 };
  static constexpr uint8_t kAllTypes = RuntimeIpc | PosixFd | Fabric;
  static constexpr uint8_t kVersion = 1;

  /// Why the exporter does not offer a type; importers quote it in their attempt log.
  enum NotOffered : uint8_t {
    Offered = 0,
    NotApplicable = 1,        // the memory's kind has no such handle (cuMem memory has no runtime IPC)
    ExcludedByConfig = 2,     // MSCCLPP_IPC_HANDLE_TYPES (or the caller) left it out
    AllocationLacksType = 3,  // a cuMem allocation created without this handle type
    ExportFailed = 4,         // the export call failed with exportError
  };
  static constexpr uint8_t kMaxNotOffered = ExportFailed;

  /// Index of a single type in the per-type arrays below: RuntimeIpc 0, PosixFd 1, Fabric 2.
  static int typeIndex(Type type);

  uint8_t typeFlags;        // the types this export offers
  uint8_t version;          // kVersion
  uint8_t notOffered[3];    // per type: NotOffered
  uint8_t reserved[3];      // zero
  int32_t exportError[3];   // per type: the CUresult / cudaError_t of a failed export, else 0
  int32_t deviceId;         // the exporter's device ordinal (for messages)
  int32_t pid;              // the exporter's pid in its namespace (for messages)
  uint32_t reservedWord;    // zero
  uint64_t baseSize;        // size of the whole allocation
  uint64_t offsetFromBase;  // where the registered pointer lies in it
  uint64_t hostHash;        // the exporter's host, process and allocation identity: the import
  uint64_t processHash;     //   cache's key (an allocation id is never reused within a process,
  uint64_t allocationId;    //   so a stale handle never matches a newer allocation)
  struct {
    cudaIpcMemHandle_t handle;
  } runtimeIpc;
  struct {
    FdServiceAddress service;
    uint64_t fdId;
  } posixFd;
  struct {
    uint8_t handle[64];  // CUmemFabricHandle
  } fabric;
};

static_assert(std::is_trivially_copyable_v<GpuIpcMemHandle>);
static_assert(std::has_unique_object_representations_v<GpuIpcMemHandle>, "no padding: every byte is defined");
static_assert(sizeof(GpuIpcMemHandle) == 232, "the handle's size is part of the wire format");

/// "RuntimeIpc|PosixFd"; "None" for 0; unknown bits as "0x..".
std::string typeFlagsToString(uint8_t flags);
std::ostream& operator<<(std::ostream& os, GpuIpcMemHandle::Type type);

/// Writes the handle raw.
void writeGpuIpcMemHandle(ByteWriter& writer, const GpuIpcMemHandle& handle);
/// Reads and validates a handle: version, flag bits, per-type notes, sizes, offset <= size, reserved
/// bytes. Throws Error(InvalidUsage) for anything a real export cannot produce.
GpuIpcMemHandle readGpuIpcMemHandle(ByteReader& reader);
/// The same checks on a handle already in memory.
void validateGpuIpcMemHandle(const GpuIpcMemHandle& handle);

/// Parses a MSCCLPP_IPC_HANDLE_TYPES value: a comma list of runtime, posixfd, fabric (any case), or
/// "all"; "" means all. Throws Error(InvalidUsage) naming each unknown item and the accepted names.
uint8_t parseIpcHandleTypes(const std::string& list);

/// The types this process may export and import: the override if one is set, else
/// MSCCLPP_IPC_HANDLE_TYPES. Throws Error(InvalidUsage) when the variable does not parse.
uint8_t permittedIpcHandleTypes();

/// Replaces MSCCLPP_IPC_HANDLE_TYPES for this process from now on (nullopt: back to the variable).
/// env() is read once per process; this is how tests force each fallback branch.
void setPermittedIpcHandleTypes(std::optional<uint8_t> types);

/// One export of local GPU memory. Owns what the export created: the fd registered with the fd
/// service (closed and unregistered on destruction) and, for cuMem memory, a retained reference to
/// the allocation (a fabric handle alone does not keep memory alive). Exports of the same allocation
/// share these while any of them lives, so one allocation costs one fd however often it is exported.
/// Thread-safe.
class GpuIpcExport {
 public:
  /// Exports the allocation containing [ptr, ptr+size) with every type it allows and
  /// permittedIpcHandleTypes() permits. Throws Error(InvalidUsage) for memory that is not GPU memory
  /// or a range outside its allocation, and an Error listing each type's reason if no type works.
  static std::shared_ptr<GpuIpcExport> create(void* ptr, size_t size);
  /// The same with an explicit set of permitted types (GpuIpcMemHandle::Type bits).
  static std::shared_ptr<GpuIpcExport> create(void* ptr, size_t size, uint8_t permittedTypes);

  ~GpuIpcExport();
  GpuIpcExport(const GpuIpcExport&) = delete;
  GpuIpcExport& operator=(const GpuIpcExport&) = delete;

  const GpuIpcMemHandle& handle() const { return handle_; }
  /// One line per type: offered, or why not.
  const std::string& exportLog() const;

  struct Allocation;

 private:
  GpuIpcExport(std::shared_ptr<Allocation> allocation, const GpuIpcMemHandle& handle);
  std::shared_ptr<Allocation> allocation_;
  GpuIpcMemHandle handle_;
};

/// Allocations of this process exported now (each counted once however many exports share it).
size_t liveGpuIpcExportAllocations();

class ImportedAllocation;

/// A peer's GPU memory mapped into this process. Handles into the same remote allocation share one
/// mapping through the import cache; the mapping goes away when the last GpuIpcMem using it does.
/// Thread-safe.
class GpuIpcMem {
 public:
  /// Maps `handle`, trying Fabric, then PosixFd, then RuntimeIpc, as offered and permitted. A PosixFd
  /// handle from another host is refused without an attempt. On total failure throws an Error listing
  /// every attempt with fix hints: Aborted when something was tried and failed, InvalidUsage when
  /// nothing could be tried. The mapping is made for the calling thread's current device.
  static std::shared_ptr<GpuIpcMem> open(const GpuIpcMemHandle& handle);
  /// The same with an explicit set of permitted types.
  static std::shared_ptr<GpuIpcMem> open(const GpuIpcMemHandle& handle, uint8_t permittedTypes);

  ~GpuIpcMem();
  GpuIpcMem(const GpuIpcMem&) = delete;
  GpuIpcMem& operator=(const GpuIpcMem&) = delete;

  /// The local address of the exporter's base + offsetFromBase.
  void* data() const { return data_; }
  /// Bytes from data() to the end of the allocation.
  size_t size() const { return size_; }
  /// The local address of the whole allocation.
  void* base() const;
  GpuIpcMemHandle::Type typeUsed() const;
  /// What was tried when the mapping was made, and why each failed attempt failed.
  const std::string& attemptLog() const;

 private:
  GpuIpcMem(std::shared_ptr<ImportedAllocation> mapping, uint64_t offset);
  std::shared_ptr<ImportedAllocation> mapping_;
  void* data_;
  size_t size_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_GPU_IPC_MEM_HPP_
