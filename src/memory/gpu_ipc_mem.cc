// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/gpu_ipc_mem.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mscclpp/env.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mutex>
#include <utility>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/gpu_checks.hpp"
#include "memory/ipc_import_cache.hpp"

namespace mscclpp {

// ---- the handle ----

namespace {

constexpr GpuIpcMemHandle::Type kSingleTypes[] = {GpuIpcMemHandle::RuntimeIpc, GpuIpcMemHandle::PosixFd,
                                                  GpuIpcMemHandle::Fabric};
// Import order: the type that also works across hosts first, the type that needs the most of the
// environment (same PID and IPC namespaces) last.
constexpr GpuIpcMemHandle::Type kImportOrder[] = {GpuIpcMemHandle::Fabric, GpuIpcMemHandle::PosixFd,
                                                  GpuIpcMemHandle::RuntimeIpc};

// Larger than any GPU's memory: a handle claiming more is not from a real export.
constexpr uint64_t kMaxAllocationSize = 1ULL << 48;

const char* typeName(GpuIpcMemHandle::Type type) {
  switch (type) {
    case GpuIpcMemHandle::None:
      return "None";
    case GpuIpcMemHandle::RuntimeIpc:
      return "RuntimeIpc";
    case GpuIpcMemHandle::PosixFd:
      return "PosixFd";
    case GpuIpcMemHandle::Fabric:
      return "Fabric";
  }
  return "Unknown";
}

std::string decodeExportError(GpuIpcMemHandle::Type type, int32_t error) {
  if (type == GpuIpcMemHandle::RuntimeIpc) {
    cudaError_t err = static_cast<cudaError_t>(error);
    return concat(cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
  }
  return cuResultName(static_cast<CUresult>(error));
}

// Why `type` is not in `handle`, in words; also used by importers, who only have the handle.
std::string describeNotOffered(const GpuIpcMemHandle& handle, GpuIpcMemHandle::Type type) {
  const int i = GpuIpcMemHandle::typeIndex(type);
  switch (static_cast<GpuIpcMemHandle::NotOffered>(handle.notOffered[i])) {
    case GpuIpcMemHandle::Offered:
      return "offered";
    case GpuIpcMemHandle::NotApplicable:
      return type == GpuIpcMemHandle::RuntimeIpc ? "not offered: cuMem memory has no runtime IPC handle"
                                                 : "not offered: cudaMalloc memory has no cuMem shareable handle";
    case GpuIpcMemHandle::ExcludedByConfig:
      return "not offered: excluded by the exporter's MSCCLPP_IPC_HANDLE_TYPES";
    case GpuIpcMemHandle::AllocationLacksType:
      return type == GpuIpcMemHandle::Fabric
                 ? "not offered: the allocation was created without fabric handles (cuMemCreate with the fabric "
                   "type needs an IMEX channel, /dev/nvidia-caps-imex-channels, on the exporter's host)"
                 : "not offered: the allocation was created without POSIX fd handles";
    case GpuIpcMemHandle::ExportFailed:
      return concat("not offered: the exporter's export failed: ", decodeExportError(type, handle.exportError[i]));
  }
  return "not offered";
}

std::string fixHint(GpuIpcMemHandle::Type type) {
  switch (type) {
    case GpuIpcMemHandle::Fabric:
      return "Fabric needs an IMEX channel (/dev/nvidia-caps-imex-channels/channel<N>, nvidia-imex running) visible to "
             "both processes";
    case GpuIpcMemHandle::PosixFd:
      return "PosixFd needs the exporter's fd service reachable: same host, same network namespace (abstract unix "
             "socket), same uid, the exporter still alive, and no ptrace/seccomp policy blocking SCM_RIGHTS or "
             "cuMemImportFromShareableHandle";
    case GpuIpcMemHandle::RuntimeIpc:
      return "RuntimeIpc needs cudaMalloc memory exported by another process in the same PID and IPC namespaces "
             "(containers: --ipc=host --pid=host)";
    case GpuIpcMemHandle::None:
      break;
  }
  return "";
}

}  // namespace

int GpuIpcMemHandle::typeIndex(Type type) {
  switch (type) {
    case RuntimeIpc:
      return 0;
    case PosixFd:
      return 1;
    case Fabric:
      return 2;
    case None:
      break;
  }
  MSCCLPP_THROW(InternalError, "GpuIpcMemHandle::typeIndex: ", static_cast<int>(type), " is not a single type");
}

std::string typeFlagsToString(uint8_t flags) {
  if (flags == 0) return "None";
  std::string out;
  for (GpuIpcMemHandle::Type type : kSingleTypes) {
    if (flags & type) out += (out.empty() ? "" : "|") + std::string(typeName(type));
  }
  if (uint8_t unknown = flags & ~GpuIpcMemHandle::kAllTypes) {
    out += concat(out.empty() ? "" : "|", "0x", std::hex, static_cast<int>(unknown));
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, GpuIpcMemHandle::Type type) {
  return os << typeFlagsToString(static_cast<uint8_t>(type));
}

namespace {

// What makes `h` impossible for a real export to have produced, or "" if nothing does.
std::string handleProblem(const GpuIpcMemHandle& h) {
  if (h.version != GpuIpcMemHandle::kVersion) {
    return concat("version ", static_cast<int>(h.version), ", expected ", static_cast<int>(GpuIpcMemHandle::kVersion));
  }
  if (h.typeFlags & ~GpuIpcMemHandle::kAllTypes) {
    return concat("unknown type flags in 0x", std::hex, static_cast<int>(h.typeFlags));
  }
  if (h.typeFlags == 0) return "offers no type";
  for (uint8_t r : h.reserved) {
    if (r != 0) return "reserved bytes are not zero";
  }
  if (h.reservedWord != 0) return "reserved bytes are not zero";
  for (GpuIpcMemHandle::Type type : kSingleTypes) {
    const int i = GpuIpcMemHandle::typeIndex(type);
    const bool offered = (h.typeFlags & type) != 0;
    if (h.notOffered[i] > GpuIpcMemHandle::kMaxNotOffered) {
      return concat(typeName(type), ": unknown not-offered reason ", static_cast<int>(h.notOffered[i]));
    }
    if (offered != (h.notOffered[i] == GpuIpcMemHandle::Offered)) {
      return concat(typeName(type), ": the type flags and the not-offered reason disagree");
    }
  }
  if (h.deviceId < 0) return concat("device id ", h.deviceId, " is invalid");
  if (h.pid <= 0) return concat("pid ", h.pid, " is invalid");
  if (h.baseSize == 0 || h.baseSize > kMaxAllocationSize) return concat("allocation size ", h.baseSize, " is invalid");
  if (h.offsetFromBase > h.baseSize) {
    return concat("offset ", h.offsetFromBase, " lies beyond the allocation of ", h.baseSize, " bytes");
  }
  if (h.allocationId == 0) return "allocation id 0 is invalid";
  if ((h.typeFlags & GpuIpcMemHandle::PosixFd) && (h.posixFd.fdId == 0 || h.posixFd.service.pid <= 0)) {
    return "PosixFd payload names no fd";
  }
  return "";
}

}  // namespace

void validateGpuIpcMemHandle(const GpuIpcMemHandle& h) {
  std::string problem = handleProblem(h);
  if (!problem.empty()) MSCCLPP_THROW(InvalidUsage, "GpuIpcMemHandle: ", problem);
}

void writeGpuIpcMemHandle(ByteWriter& writer, const GpuIpcMemHandle& handle) { writer.put(handle); }

GpuIpcMemHandle readGpuIpcMemHandle(ByteReader& reader) {
  GpuIpcMemHandle handle = reader.get<GpuIpcMemHandle>("GpuIpcMemHandle");
  std::string problem = handleProblem(handle);
  if (!problem.empty()) reader.fail("GpuIpcMemHandle: " + problem);
  return handle;
}

// ---- which types are permitted ----

namespace {

std::mutex permittedMutex;
std::optional<uint8_t> permittedOverride;

}  // namespace

uint8_t parseIpcHandleTypes(const std::string& list) {
  uint8_t types = 0;
  std::string unknown;
  std::vector<std::string> items = splitList(list);
  if (items.empty()) return GpuIpcMemHandle::kAllTypes;
  for (const std::string& item : items) {
    std::string name = toUpper(item);
    if (name == "RUNTIME") {
      types |= GpuIpcMemHandle::RuntimeIpc;
    } else if (name == "POSIXFD") {
      types |= GpuIpcMemHandle::PosixFd;
    } else if (name == "FABRIC") {
      types |= GpuIpcMemHandle::Fabric;
    } else if (name == "ALL") {
      types |= GpuIpcMemHandle::kAllTypes;
    } else {
      unknown += (unknown.empty() ? "'" : ", '") + item + "'";
    }
  }
  if (!unknown.empty()) {
    MSCCLPP_THROW(InvalidUsage, "MSCCLPP_IPC_HANDLE_TYPES='", list, "': unknown handle type ", unknown,
                  "; use a comma list of runtime, posixfd, fabric, or all");
  }
  return types;
}

uint8_t permittedIpcHandleTypes() {
  {
    std::lock_guard<std::mutex> lock(permittedMutex);
    if (permittedOverride) return *permittedOverride;
  }
  return parseIpcHandleTypes(env()->ipcHandleTypes);
}

void setPermittedIpcHandleTypes(std::optional<uint8_t> types) {
  MSCCLPP_CHECK_USAGE(!types || (*types & ~GpuIpcMemHandle::kAllTypes) == 0,
                      "setPermittedIpcHandleTypes: unknown type bits in ", typeFlagsToString(*types));
  std::lock_guard<std::mutex> lock(permittedMutex);
  permittedOverride = types;
}

// ---- RAII for driver resources ----

namespace {

/// Owns one reference to a cuMem allocation handle.
class UniqueAllocHandle {
 public:
  UniqueAllocHandle() = default;
  explicit UniqueAllocHandle(CUmemGenericAllocationHandle handle) : handle_(handle), valid_(true) {}
  ~UniqueAllocHandle() { reset(); }
  UniqueAllocHandle(UniqueAllocHandle&& o) noexcept : handle_(o.handle_), valid_(std::exchange(o.valid_, false)) {}
  UniqueAllocHandle& operator=(UniqueAllocHandle&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = o.handle_;
      valid_ = std::exchange(o.valid_, false);
    }
    return *this;
  }
  UniqueAllocHandle(const UniqueAllocHandle&) = delete;
  UniqueAllocHandle& operator=(const UniqueAllocHandle&) = delete;

  CUmemGenericAllocationHandle get() const { return handle_; }
  bool valid() const { return valid_; }
  void reset() noexcept {
    if (valid_) MSCCLPP_CU_IGNORE(cu::cuMemRelease(handle_));
    valid_ = false;
  }

 private:
  CUmemGenericAllocationHandle handle_ = 0;
  bool valid_ = false;
};

std::atomic<uint64_t> nextAllocationId{1};
std::atomic<size_t> liveExportAllocations{0};

}  // namespace

// ---- export ----

/// What one export of an allocation created; shared by every GpuIpcExport of that allocation.
struct GpuIpcExport::Allocation {
  uintptr_t base = 0;
  uint8_t permitted = 0;
  GpuIpcMemHandle handle{};  // offsetFromBase 0
  std::string log;
  UniqueAllocHandle retained;  // cuMem memory: keeps the allocation (and so a fabric export) alive
  FdService::Registration fd;  // PosixFd: the exported fd, served by this process's fd service

  Allocation() { ++liveExportAllocations; }
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
};

namespace {

struct ExportRegistry {
  std::mutex mutex;
  // (allocation base, permitted types) -> the live export of that allocation.
  std::map<std::pair<uintptr_t, uint8_t>, std::weak_ptr<GpuIpcExport::Allocation>> live;
};

ExportRegistry& exportRegistry() {
  static ExportRegistry* registry = new ExportRegistry();
  return *registry;
}

void note(GpuIpcMemHandle& h, GpuIpcMemHandle::Type type, GpuIpcMemHandle::NotOffered reason, int32_t error = 0) {
  const int i = GpuIpcMemHandle::typeIndex(type);
  h.notOffered[i] = reason;
  h.exportError[i] = error;
}

// Exports a cuMem allocation as `type` (PosixFd or Fabric) into `a`, or notes why not.
void exportCuMem(GpuIpcExport::Allocation& a, const CUmemAllocationProp& prop, GpuIpcMemHandle::Type type) {
  GpuIpcMemHandle& h = a.handle;
  const CUmemAllocationHandleType cuType =
      type == GpuIpcMemHandle::PosixFd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_FABRIC;
  if (!(a.permitted & type)) return note(h, type, GpuIpcMemHandle::ExcludedByConfig);
  if (!(requestedHandleTypes(prop) & cuType)) return note(h, type, GpuIpcMemHandle::AllocationLacksType);
  if (type == GpuIpcMemHandle::PosixFd) {
    int fd = -1;
    CUresult res = cu::cuMemExportToShareableHandle(&fd, a.retained.get(), cuType, 0);
    if (res != CUDA_SUCCESS) return note(h, type, GpuIpcMemHandle::ExportFailed, res);
    UniqueFd owned(fd);
    try {
      a.fd = FdService::acquire()->registerFd(std::move(owned));
    } catch (const BaseError& e) {
      a.log += concat("PosixFd: the fd service is unavailable: ", e.what(), "\n");
      return note(h, type, GpuIpcMemHandle::ExportFailed, CUDA_ERROR_OPERATING_SYSTEM);
    }
    h.posixFd.service = a.fd.address();
    h.posixFd.fdId = a.fd.id();
  } else {
    CUmemFabricHandle fabric;
    static_assert(sizeof(fabric) == sizeof(h.fabric.handle));
    CUresult res = cu::cuMemExportToShareableHandle(&fabric, a.retained.get(), cuType, 0);
    if (res != CUDA_SUCCESS) return note(h, type, GpuIpcMemHandle::ExportFailed, res);
    std::memcpy(h.fabric.handle, &fabric, sizeof(fabric));
  }
  h.typeFlags |= type;
}

std::shared_ptr<GpuIpcExport::Allocation> exportAllocation(uintptr_t base, size_t baseSize, int deviceId,
                                                           uint8_t permitted, UniqueAllocHandle retained,
                                                           const cudaIpcMemHandle_t* runtimeHandle,
                                                           cudaError_t runtimeError) {
  auto a = std::make_shared<GpuIpcExport::Allocation>();
  a->base = base;
  a->permitted = permitted;
  GpuIpcMemHandle& h = a->handle;
  h.version = GpuIpcMemHandle::kVersion;
  h.deviceId = deviceId;
  h.pid = static_cast<int32_t>(getpid());
  h.baseSize = baseSize;
  h.hostHash = getHostHash();
  h.processHash = getPidHash();
  h.allocationId = nextAllocationId.fetch_add(1);
  const bool cuMem = retained.valid();
  if (!(permitted & GpuIpcMemHandle::RuntimeIpc)) {
    note(h, GpuIpcMemHandle::RuntimeIpc, GpuIpcMemHandle::ExcludedByConfig);
  } else if (runtimeError == cudaSuccess) {
    h.runtimeIpc.handle = *runtimeHandle;
    h.typeFlags |= GpuIpcMemHandle::RuntimeIpc;
  } else {
    note(h, GpuIpcMemHandle::RuntimeIpc, cuMem ? GpuIpcMemHandle::NotApplicable : GpuIpcMemHandle::ExportFailed,
         runtimeError);
  }
  if (cuMem) {
    a->retained = std::move(retained);
    CUmemAllocationProp prop = {};
    CUresult res = cu::cuMemGetAllocationPropertiesFromHandle(&prop, a->retained.get());
    if (res != CUDA_SUCCESS) {
      note(h, GpuIpcMemHandle::PosixFd, GpuIpcMemHandle::ExportFailed, res);
      note(h, GpuIpcMemHandle::Fabric, GpuIpcMemHandle::ExportFailed, res);
    } else {
      exportCuMem(*a, prop, GpuIpcMemHandle::PosixFd);
      exportCuMem(*a, prop, GpuIpcMemHandle::Fabric);
    }
  } else {
    note(h, GpuIpcMemHandle::PosixFd, GpuIpcMemHandle::NotApplicable);
    note(h, GpuIpcMemHandle::Fabric, GpuIpcMemHandle::NotApplicable);
  }
  for (GpuIpcMemHandle::Type type : kSingleTypes) {
    a->log += concat(typeName(type), ": ", describeNotOffered(h, type), "\n");
  }
  return a;
}

}  // namespace

GpuIpcExport::Allocation::~Allocation() {
  --liveExportAllocations;
  ExportRegistry& registry = exportRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.live.find({base, permitted});
  if (it != registry.live.end() && it->second.expired()) registry.live.erase(it);
}

size_t liveGpuIpcExportAllocations() { return liveExportAllocations.load(); }

GpuIpcExport::GpuIpcExport(std::shared_ptr<Allocation> allocation, const GpuIpcMemHandle& handle)
    : allocation_(std::move(allocation)), handle_(handle) {}

GpuIpcExport::~GpuIpcExport() = default;

const std::string& GpuIpcExport::exportLog() const { return allocation_->log; }

std::shared_ptr<GpuIpcExport> GpuIpcExport::create(void* ptr, size_t size) {
  return create(ptr, size, permittedIpcHandleTypes());
}

std::shared_ptr<GpuIpcExport> GpuIpcExport::create(void* ptr, size_t size, uint8_t permitted) {
  MSCCLPP_CHECK_USAGE(ptr != nullptr && size > 0, "GpuIpcExport: empty range (", ptr, ", ", size, " bytes)");
  MSCCLPP_CHECK_USAGE((permitted & ~GpuIpcMemHandle::kAllTypes) == 0, "GpuIpcExport: unknown type bits in ",
                      typeFlagsToString(permitted));
  AvoidCudaGraphCaptureGuard captureGuard;
  const CUdeviceptr dptr = reinterpret_cast<CUdeviceptr>(ptr);
  cudaPointerAttributes attrs = {};
  cudaError_t attrErr = cudaPointerGetAttributes(&attrs, ptr);
  if (attrErr != cudaSuccess) cudaGetLastError();
  MSCCLPP_CHECK_USAGE(attrErr == cudaSuccess && isDeviceMemory(attrs), "GpuIpcExport: ", ptr,
                      " is not device memory of this process (",
                      attrErr == cudaSuccess ? std::string("host or managed memory")
                                             : concat(cudaGetErrorName(attrErr), ": ", cudaGetErrorString(attrErr)),
                      ")");
  const int deviceId = attrs.device;
  CUdeviceptr basePtr{};
  size_t baseSize = 0;
  MSCCLPP_CUTHROW(cu::cuMemGetAddressRange(&basePtr, &baseSize, dptr));
  const uintptr_t base = deviceAddress(basePtr);
  const uint64_t offset = deviceAddress(dptr) - base;
  MSCCLPP_CHECK_USAGE(offset <= baseSize && size <= baseSize - offset, "GpuIpcExport: [", ptr, ", +", size,
                      ") extends past the end of its allocation (", baseSize, " bytes at ",
                      reinterpret_cast<void*>(base), ")");
  CudaDeviceGuard deviceGuard(deviceId);

  UniqueAllocHandle retained;
  CUmemGenericAllocationHandle raw;
  if (cu::cuMemRetainAllocationHandle(&raw, ptr) == CUDA_SUCCESS) retained = UniqueAllocHandle(raw);

  // Tried for cuMem memory too (where it is expected to fail): what decides is whether the driver
  // gives a handle, not what kind of memory we believe this is. A runtime IPC handle also names its
  // allocation, so comparing it tells a live export of this allocation from one of freed memory
  // whose address was reused.
  cudaIpcMemHandle_t runtimeHandle{};
  cudaError_t runtimeError = cudaErrorNotSupported;
  if (permitted & GpuIpcMemHandle::RuntimeIpc) {
    runtimeError = cudaIpcGetMemHandle(&runtimeHandle, reinterpret_cast<void*>(base));
    if (runtimeError != cudaSuccess) cudaGetLastError();
  }

  // Declared before the lock: an allocation released here must not run its destructor, which takes
  // the registry's mutex, while this function holds it.
  std::shared_ptr<Allocation> allocation, discarded;
  std::string failure;
  bool anyTried = false;
  {
    ExportRegistry& registry = exportRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    const std::pair<uintptr_t, uint8_t> key{base, permitted};
    auto it = registry.live.find(key);
    if (it != registry.live.end()) allocation = it->second.lock();
    if (allocation) {
      // cuMemRetainAllocationHandle returns the very handle the memory was mapped with, so equal
      // handles (or equal runtime IPC handles) mean the same allocation, not a reused address.
      bool same = allocation->handle.baseSize == baseSize && allocation->retained.valid() == retained.valid();
      if (same && retained.valid()) {
        same = allocation->retained.get() == retained.get();
      } else if (same) {
        same = std::memcmp(&allocation->handle.runtimeIpc.handle, &runtimeHandle, sizeof(runtimeHandle)) == 0;
      }
      if (!same) discarded = std::move(allocation);
    }
    if (!allocation) {
      allocation =
          exportAllocation(base, baseSize, deviceId, permitted, std::move(retained), &runtimeHandle, runtimeError);
      if (allocation->handle.typeFlags == 0) {
        for (GpuIpcMemHandle::Type type : kSingleTypes) {
          anyTried |= allocation->handle.notOffered[GpuIpcMemHandle::typeIndex(type)] == GpuIpcMemHandle::ExportFailed;
        }
        failure =
            concat("GpuIpcExport: no way to share ", formatBytes(baseSize), " at ", reinterpret_cast<void*>(base),
                   " on GPU ", deviceId, " (permitted types: ", typeFlagsToString(permitted), "):\n", allocation->log);
        discarded = std::move(allocation);
      } else {
        registry.live[key] = allocation;
        LOG_DEBUG(MEM, "exported ", formatBytes(baseSize), " at ", reinterpret_cast<void*>(base), " on GPU ", deviceId,
                  " as ", typeFlagsToString(allocation->handle.typeFlags), " (allocation id ",
                  allocation->handle.allocationId, ")");
      }
    }
  }
  if (!failure.empty()) {
    discarded.reset();
    if (anyTried) MSCCLPP_THROW(Aborted, failure);
    MSCCLPP_THROW(InvalidUsage, failure);
  }
  GpuIpcMemHandle handle = allocation->handle;
  handle.offsetFromBase = offset;
  return std::shared_ptr<GpuIpcExport>(new GpuIpcExport(std::move(allocation), handle));
}

// ---- import ----

namespace {

/// A cuMem allocation imported through a shareable handle (PosixFd or Fabric) and mapped read-write.
class CuMemImport final : public ImportedAllocation {
 public:
  /// Maps the whole allocation behind `handle` (`size` bytes) for the current device.
  static std::unique_ptr<CuMemImport> map(UniqueAllocHandle handle, size_t size, GpuIpcMemHandle::Type type);
  ~CuMemImport() override;

 private:
  CuMemImport(CUdeviceptr va, size_t size, GpuIpcMemHandle::Type type)
      : ImportedAllocation(reinterpret_cast<void*>(va), size, type), va_(va), size_(size) {}
  CUdeviceptr va_;
  size_t size_;
  bool mapped_ = false;
};

std::unique_ptr<CuMemImport> CuMemImport::map(UniqueAllocHandle handle, size_t size, GpuIpcMemHandle::Type type) {
  CUmemAllocationProp prop = {};
  MSCCLPP_CUTHROW(cu::cuMemGetAllocationPropertiesFromHandle(&prop, handle.get()));
  size_t gran = 0;
  MSCCLPP_CUTHROW(cu::cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  MSCCLPP_CHECK_USAGE(gran != 0 && size % gran == 0, "the handle's allocation size ", size,
                      " is not a multiple of the allocation granularity ", gran);
  CUdeviceptr va{};
  MSCCLPP_CUTHROW(cu::cuMemAddressReserve(&va, size, gran, CUdeviceptr{}, 0));
  std::unique_ptr<CuMemImport> mapping(new CuMemImport(va, size, type));
  MSCCLPP_CUTHROW(cu::cuMemMap(va, size, 0, handle.get(), 0));
  mapping->mapped_ = true;
  // The mapping now holds the allocation; our reference goes when `handle` does.
  int current = 0;
  MSCCLPP_CUDATHROW(cudaGetDevice(&current));
  CUmemAccessDesc desc = {};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = current;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  MSCCLPP_CUTHROW(cu::cuMemSetAccess(va, size, &desc, 1));
  // Other GPUs of this process may reach it too where they have a path; a GPU without one is skipped.
  for (int d = 0; d < gpuCapabilities().deviceCount; ++d) {
    if (d == current) continue;
    desc.location.id = d;
    CUresult res = cu::cuMemSetAccess(va, size, &desc, 1);
    if (res != CUDA_SUCCESS) LOG_DEBUG(MEM, "GPU ", d, " gets no access to an imported mapping: ", cuResultName(res));
  }
  return mapping;
}

CuMemImport::~CuMemImport() {
  if (mapped_) MSCCLPP_CU_IGNORE(cu::cuMemUnmap(va_, size_));
  MSCCLPP_CU_IGNORE(cu::cuMemAddressFree(va_, size_));
}

/// One cudaIpcOpenMemHandle of a runtime IPC handle, closed on destruction.
class RuntimeIpcOpening {
 public:
  RuntimeIpcOpening(void* base, int deviceId) : base_(base), deviceId_(deviceId) {}
  ~RuntimeIpcOpening() {
    try {
      CudaDeviceGuard guard(deviceId_);
      MSCCLPP_CUDA_IGNORE(cudaIpcCloseMemHandle(base_));
    } catch (const BaseError& e) {
      LOG_WARN(MEM, "closing a runtime IPC mapping failed: ", e.what());
    }
  }
  RuntimeIpcOpening(const RuntimeIpcOpening&) = delete;
  RuntimeIpcOpening& operator=(const RuntimeIpcOpening&) = delete;
  void* base() const { return base_; }

 private:
  void* base_;
  int deviceId_;
};

// A runtime IPC handle can be opened only once per process at a time, yet two exports of one
// allocation (one dropped and made again while this process still maps it) carry different allocation
// ids. Openings are therefore also shared by the handle's bytes, which name the allocation.
std::shared_ptr<RuntimeIpcOpening> openRuntimeIpc(const cudaIpcMemHandle_t& handle, int deviceId) {
  static std::mutex mutex;
  static auto* openings = new std::map<std::string, std::weak_ptr<RuntimeIpcOpening>>();
  const std::string key(reinterpret_cast<const char*>(&handle), sizeof(handle));
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = openings->begin(); it != openings->end();) {
    it = it->second.expired() ? openings->erase(it) : std::next(it);
  }
  auto& slot = (*openings)[key];
  if (auto opening = slot.lock()) return opening;
  void* base = nullptr;
  cudaError_t err = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (err != cudaSuccess) {
    cudaGetLastError();
    openings->erase(key);
    throw CudaError("cudaIpcOpenMemHandle failed", err);
  }
  auto opening = std::make_shared<RuntimeIpcOpening>(base, deviceId);
  slot = opening;
  return opening;
}

/// cudaMalloc memory of another process opened through runtime IPC.
class RuntimeIpcImport final : public ImportedAllocation {
 public:
  RuntimeIpcImport(std::shared_ptr<RuntimeIpcOpening> opening, size_t size)
      : ImportedAllocation(opening->base(), size, GpuIpcMemHandle::RuntimeIpc), opening_(std::move(opening)) {}

 private:
  std::shared_ptr<RuntimeIpcOpening> opening_;
};

// Driver calls act on the calling thread's current context; a thread that has made no runtime call
// yet (a user's helper thread deserializing memory) has none until the runtime creates it.
void makeContextCurrent() {
  cudaError_t err = cudaFree(nullptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw CudaError("initializing the current device's context (cudaFree(nullptr)) failed", err);
  }
}

std::unique_ptr<ImportedAllocation> importOne(const GpuIpcMemHandle& h, GpuIpcMemHandle::Type type) {
  switch (type) {
    case GpuIpcMemHandle::Fabric: {
      makeContextCurrent();
      CUmemFabricHandle fabric;
      std::memcpy(&fabric, h.fabric.handle, sizeof(fabric));
      CUmemGenericAllocationHandle raw;
      MSCCLPP_CUTHROW(cu::cuMemImportFromShareableHandle(&raw, &fabric, CU_MEM_HANDLE_TYPE_FABRIC));
      return CuMemImport::map(UniqueAllocHandle(raw), h.baseSize, type);
    }
    case GpuIpcMemHandle::PosixFd: {
      UniqueFd fd = fetchFd(h.posixFd.service, h.posixFd.fdId);
      makeContextCurrent();
      CUmemGenericAllocationHandle raw;
      MSCCLPP_CUTHROW(cu::cuMemImportFromShareableHandle(
          &raw, reinterpret_cast<void*>(static_cast<uintptr_t>(fd.get())), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      return CuMemImport::map(UniqueAllocHandle(raw), h.baseSize, type);
    }
    case GpuIpcMemHandle::RuntimeIpc: {
      int current = 0;
      MSCCLPP_CUDATHROW(cudaGetDevice(&current));
      return std::make_unique<RuntimeIpcImport>(openRuntimeIpc(h.runtimeIpc.handle, current), h.baseSize);
    }
    case GpuIpcMemHandle::None:
      break;
  }
  MSCCLPP_THROW(InternalError, "importOne: not a single type");
}

std::unique_ptr<ImportedAllocation> importWithFallback(const GpuIpcMemHandle& h, uint8_t permitted) {
  const std::string exporter =
      concat(formatBytes(h.baseSize), " on GPU ", h.deviceId, " of pid ", h.pid,
             h.hostHash == getHostHash() ? "" : " on another host", " (allocation id ", h.allocationId, ")");
  std::string log;
  std::string hints;
  bool attempted = false;
  for (GpuIpcMemHandle::Type type : kImportOrder) {
    const std::string name = typeName(type);
    if (!(h.typeFlags & type)) {
      log += concat(name, ": ", describeNotOffered(h, type), "\n");
      continue;
    }
    if (!(permitted & type)) {
      log += name + ": not attempted: excluded by this process's MSCCLPP_IPC_HANDLE_TYPES\n";
      continue;
    }
    if (type == GpuIpcMemHandle::PosixFd && h.hostHash != getHostHash()) {
      log += name + ": refused: exported on another host; a POSIX fd cannot cross hosts (use Fabric)\n";
      continue;
    }
    attempted = true;
    try {
      AvoidCudaGraphCaptureGuard captureGuard;
      std::unique_ptr<ImportedAllocation> mapping = importOne(h, type);
      log += name + ": ok\n";
      mapping->setAttemptLog(log);
      LOG_INFO(MEM, "mapped ", exporter, " via ", name, " at ", mapping->base(),
               log.find("failed") != std::string::npos ? concat(" after:\n", log) : std::string());
      return mapping;
    } catch (const BaseError& e) {
      log += concat(name, ": failed: ", e.what(), "\n");
      hints += "  - " + fixHint(type) + "\n";
    }
  }
  std::string indented;
  for (const std::string& line : splitList(log, '\n')) indented += "  " + line + "\n";
  const std::string message = concat("GpuIpcMem: cannot map ", exporter, "; offered: ", typeFlagsToString(h.typeFlags),
                                     ", permitted here: ", typeFlagsToString(permitted), ". Attempts:\n", indented,
                                     hints.empty() ? std::string() : "Hints:\n" + hints);
  if (attempted) MSCCLPP_THROW(Aborted, message);
  MSCCLPP_THROW(InvalidUsage, message);
}

}  // namespace

GpuIpcMem::GpuIpcMem(std::shared_ptr<ImportedAllocation> mapping, uint64_t offset)
    : mapping_(std::move(mapping)),
      data_(static_cast<char*>(mapping_->base()) + offset),
      size_(mapping_->size() - offset) {}

GpuIpcMem::~GpuIpcMem() = default;

void* GpuIpcMem::base() const { return mapping_->base(); }

GpuIpcMemHandle::Type GpuIpcMem::typeUsed() const { return mapping_->typeUsed(); }

const std::string& GpuIpcMem::attemptLog() const { return mapping_->attemptLog(); }

std::shared_ptr<GpuIpcMem> GpuIpcMem::open(const GpuIpcMemHandle& handle) {
  return open(handle, permittedIpcHandleTypes());
}

std::shared_ptr<GpuIpcMem> GpuIpcMem::open(const GpuIpcMemHandle& handle, uint8_t permitted) {
  validateGpuIpcMemHandle(handle);
  MSCCLPP_CHECK_USAGE((permitted & ~GpuIpcMemHandle::kAllTypes) == 0, "GpuIpcMem::open: unknown type bits in ",
                      typeFlagsToString(permitted));
  IpcImportKey key{handle.hostHash, handle.processHash, handle.allocationId};
  std::shared_ptr<ImportedAllocation> mapping =
      IpcImportCache::instance().acquire(key, [&] { return importWithFallback(handle, permitted); });
  MSCCLPP_CHECK_USAGE(mapping->size() == handle.baseSize, "GpuIpcMem::open: allocation id ", handle.allocationId,
                      " is mapped with ", mapping->size(), " bytes but the handle says ", handle.baseSize);
  return std::shared_ptr<GpuIpcMem>(new GpuIpcMem(std::move(mapping), handle.offsetFromBase));
}

}  // namespace mscclpp
