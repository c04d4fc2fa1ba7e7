// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_GPU_UTILS_HPP_
#define MSCCLPP_GPU_UTILS_HPP_

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device.hpp"
#include "env.hpp"
#include "errors.hpp"
#include "gpu.hpp"
#include "utils.hpp"

/// Throws mscclpp::CudaError naming the call and the place unless `cmd` returns cudaSuccess.
#define MSCCLPP_CUDATHROW(cmd)                                                                                         \
  do {                                                                                                                 \
    cudaError_t mscclppCudaErr_ = cmd;                                                                                 \
    if (mscclppCudaErr_ != cudaSuccess) {                                                                              \
      throw ::mscclpp::CudaError(std::string("Call to " #cmd " failed. ") + __FILE__ + ":" + std::to_string(__LINE__), \
                                 mscclppCudaErr_);                                                                     \
    }                                                                                                                  \
  } while (false)

/// Throws mscclpp::CuError naming the call and the place unless `cmd` returns CUDA_SUCCESS.
#define MSCCLPP_CUTHROW(cmd)                                                                                         \
  do {                                                                                                               \
    CUresult mscclppCuErr_ = cmd;                                                                                    \
    if (mscclppCuErr_ != CUDA_SUCCESS) {                                                                             \
      throw ::mscclpp::CuError(std::string("Call to " #cmd " failed. ") + __FILE__ + ":" + std::to_string(__LINE__), \
                               mscclppCuErr_);                                                                       \
    }                                                                                                                \
  } while (false)

namespace mscclpp {

/// Switches the calling thread's stream capture mode to relaxed for its scope, so that setup work
/// (allocations, memsets) done while the user captures a CUDA graph is not captured and does not
/// invalidate the capture. Restores the previous mode on destruction.
struct AvoidCudaGraphCaptureGuard {
  AvoidCudaGraphCaptureGuard();
  ~AvoidCudaGraphCaptureGuard();
  AvoidCudaGraphCaptureGuard(const AvoidCudaGraphCaptureGuard&) = delete;
  AvoidCudaGraphCaptureGuard& operator=(const AvoidCudaGraphCaptureGuard&) = delete;
  AvoidCudaGraphCaptureGuard(AvoidCudaGraphCaptureGuard&&) = delete;
  AvoidCudaGraphCaptureGuard& operator=(AvoidCudaGraphCaptureGuard&&) = delete;
  cudaStreamCaptureMode mode_;
  bool active_;
};

/// Makes `deviceId` current for its scope and restores the previous device on destruction. A negative
/// id does nothing.
struct CudaDeviceGuard {
  CudaDeviceGuard(int deviceId);
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard(CudaDeviceGuard&&) = delete;
  CudaDeviceGuard& operator=(CudaDeviceGuard&&) = delete;
  int deviceId_;
  int origDeviceId_;
};

/// Owns a cudaStream_t created with flags on the current device; destroys it on destruction.
///
/// Not copyable, unlike MSCCL++'s, where a copy holds the same cudaStream_t and each copy destroys it:
/// the second destruction is a use after free. Share one through std::shared_ptr instead.
struct CudaStreamWithFlags {
  /// No stream yet: call set() later.
  CudaStreamWithFlags();
  /// Creates a stream with `flags` on the current device.
  CudaStreamWithFlags(unsigned int flags);
  ~CudaStreamWithFlags();
  CudaStreamWithFlags(const CudaStreamWithFlags&) = delete;
  CudaStreamWithFlags& operator=(const CudaStreamWithFlags&) = delete;

  /// Creates the stream; throws Error(InvalidUsage) if it already exists.
  void set(unsigned int flags);
  bool empty() const;
  operator cudaStream_t() const { return stream_; }
  int deviceId() const { return deviceId_; }

  cudaStream_t stream_;
  int deviceId_;
};

class GpuStreamPool;

/// A non-blocking stream borrowed from a GpuStreamPool. Copies share the stream, as in MSCCL++; it
/// goes back to the pool (it is not destroyed) when the last copy is destroyed.
class GpuStream {
 protected:
  GpuStream(std::shared_ptr<GpuStreamPool> pool, std::shared_ptr<CudaStreamWithFlags> stream);

 public:
  operator cudaStream_t() const { return stream_->stream_; }
  int deviceId() const { return stream_->deviceId(); }

 private:
  friend class GpuStreamPool;
  // Its deleter, run when the last copy goes, hands the pooled stream back to the pool.
  std::shared_ptr<CudaStreamWithFlags> stream_;
};

/// Reusable non-blocking streams, one list per device. Thread-safe.
///
/// Not copyable, unlike MSCCL++'s: a copy would list the same idle streams as the original, and the
/// two pools would lend one stream to two borrowers at once. Share the pool through std::shared_ptr
/// (gpuStreamPool() returns the process-wide one).
class GpuStreamPool : public std::enable_shared_from_this<GpuStreamPool> {
 public:
  GpuStreamPool();
  GpuStreamPool(const GpuStreamPool&) = delete;
  GpuStreamPool& operator=(const GpuStreamPool&) = delete;
  /// A stream of the current device: a pooled one if any is free, else a new one.
  GpuStream getStream();
  /// Destroys the pooled (not borrowed) streams.
  void clear();

 protected:
  friend class GpuStream;
  std::mutex mutex_;
  std::unordered_map<int, std::vector<std::shared_ptr<CudaStreamWithFlags>>> streams_;
};

/// The process-wide stream pool.
std::shared_ptr<GpuStreamPool> gpuStreamPool();

namespace detail {

/// Grants read-write access to the cuMem mapping [base, base+size) to every device that can reach it.
void setReadWriteMemoryAccess(void* base, size_t size);
/// The device owning `ptr`, or -1 for host memory.
int gpuIdFromAddress(void* ptr);

/// cudaMalloc'ed, zeroed device memory of the current device.
void* gpuCalloc(size_t bytes);
/// Zeroed pinned host memory (cudaHostAlloc with `flags`).
void* gpuCallocHost(size_t bytes, unsigned int flags);
#if defined(MSCCLPP_DEVICE_HIP)
void* gpuCallocUncached(size_t bytes);
#endif
/// Zeroed cuMem memory of the current device, exportable as POSIX fd (and as fabric handle where an
/// allocation with it succeeds), mapped read-write. `gran` 0 means the minimum granularity; `align`
/// 0 means `gran`. The size is rounded up to `gran`.
void* gpuCallocPhysical(size_t bytes, size_t gran = 0, size_t align = 0);

void gpuFree(void* ptr);
void gpuFreeHost(void* ptr);
void gpuFreePhysical(void* ptr);

void gpuMemcpyAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                    cudaMemcpyKind kind = cudaMemcpyDefault);
/// Synchronous copy on a pooled stream (never the legacy default stream).
void gpuMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind = cudaMemcpyDefault);
/// Synchronous memset on a pooled stream.
void gpuMemset(void* ptr, int value, size_t bytes);

/// Allocates with `alloc` and wraps the pointer in `Memory` with `Deleter`.
template <class T, class Deleter, class Memory, typename Alloc, typename... Args>
Memory safeAlloc(Alloc alloc, size_t nelems, Args&&... args) {
  T* ptr = reinterpret_cast<T*>(alloc(nelems * sizeof(T), std::forward<Args>(args)...));
  return Memory(ptr, Deleter());
}

template <class T = void>
struct GpuDeleter {
  void operator()(void* ptr) { gpuFree(ptr); }
};

template <class T = void>
struct GpuHostDeleter {
  void operator()(void* ptr) { gpuFreeHost(ptr); }
};

template <class T = void>
struct GpuPhysicalDeleter {
  void operator()(void* ptr) { gpuFreePhysical(ptr); }
};

template <class T>
using UniqueGpuPtr = std::unique_ptr<T, detail::GpuDeleter<T>>;
template <class T>
using UniqueGpuHostPtr = std::unique_ptr<T, detail::GpuHostDeleter<T>>;
template <class T>
using UniqueGpuPhysicalPtr = std::unique_ptr<T, detail::GpuPhysicalDeleter<T>>;

template <class T>
auto gpuCallocShared(size_t nelems = 1) {
  return detail::safeAlloc<T, detail::GpuDeleter<T>, std::shared_ptr<T>>(detail::gpuCalloc, nelems);
}
template <class T>
auto gpuCallocUnique(size_t nelems = 1) {
  return detail::safeAlloc<T, detail::GpuDeleter<T>, UniqueGpuPtr<T>>(detail::gpuCalloc, nelems);
}
template <class T>
auto gpuCallocHostShared(size_t nelems = 1, unsigned int flags = cudaHostAllocMapped) {
  return detail::safeAlloc<T, detail::GpuHostDeleter<T>, std::shared_ptr<T>>(detail::gpuCallocHost, nelems, flags);
}
template <class T>
auto gpuCallocHostUnique(size_t nelems = 1, unsigned int flags = cudaHostAllocMapped) {
  return detail::safeAlloc<T, detail::GpuHostDeleter<T>, UniqueGpuHostPtr<T>>(detail::gpuCallocHost, nelems, flags);
}
#if defined(MSCCLPP_DEVICE_HIP)
template <class T>
auto gpuCallocUncachedShared(size_t nelems = 1) {
  return detail::safeAlloc<T, detail::GpuDeleter<T>, std::shared_ptr<T>>(detail::gpuCallocUncached, nelems);
}
template <class T>
auto gpuCallocUncachedUnique(size_t nelems = 1) {
  return detail::safeAlloc<T, detail::GpuDeleter<T>, UniqueGpuPtr<T>>(detail::gpuCallocUncached, nelems);
}
#endif
template <class T>
auto gpuCallocPhysicalShared(size_t nelems = 1, size_t gran = 0, size_t align = 0) {
  return detail::safeAlloc<T, detail::GpuPhysicalDeleter<T>, std::shared_ptr<T>>(detail::gpuCallocPhysical, nelems,
                                                                                 gran, align);
}
template <class T>
auto gpuCallocPhysicalUnique(size_t nelems = 1, size_t gran = 0, size_t align = 0) {
  return detail::safeAlloc<T, detail::GpuPhysicalDeleter<T>, UniqueGpuPhysicalPtr<T>>(detail::gpuCallocPhysical, nelems,
                                                                                      gran, align);
}

#if (CUDA_NVLS_API_AVAILABLE)
/// The shareable handle type of memory that can be bound to a multicast object (POSIX fd).
extern CUmemAllocationHandleType nvlsCompatibleMemHandleType;
/// Multicast granularity for `size`. Only meaningful where isNvlsSupported().
size_t getMulticastGranularity(size_t size, CUmulticastGranularity_flags granFlag);
#endif
/// cuMem allocation granularity of the current device for an exportable (POSIX fd) allocation.
size_t getCuAllocationGranularity(CUmemAllocationGranularity_flags granFlag);

}  // namespace detail

/// Copies `nelems` elements asynchronously on `stream`.
template <class T = char>
void gpuMemcpyAsync(T* dst, const T* src, size_t nelems, cudaStream_t stream, cudaMemcpyKind kind = cudaMemcpyDefault) {
  detail::gpuMemcpyAsync(dst, src, nelems * sizeof(T), stream, kind);
}

/// Copies `nelems` elements and waits for the copy.
template <class T = char>
void gpuMemcpy(T* dst, const T* src, size_t nelems, cudaMemcpyKind kind = cudaMemcpyDefault) {
  detail::gpuMemcpy(dst, src, nelems * sizeof(T), kind);
}

/// Sets `bytes` bytes at `ptr` to `value` and waits.
void gpuMemset(void* ptr, int value, size_t bytes);

/// Whether NVLink SHARP (multicast) is used by this library on this machine. This build never creates
/// multicast objects (see switch_channel.hpp for the refusal and its reasons), so it is false.
bool isNvlsSupported();

/// Whether `ptr` lies in memory allocated through cuMemCreate/cuMemMap (not cudaMalloc, not host).
bool isCuMemMapAllocated(void* ptr);

/// GPU memory for communication: zeroed, and exportable to other processes. Where the device supports
/// virtual memory management it is a cuMem allocation (rounded up to the allocation granularity,
/// exportable as a POSIX fd, and as a fabric handle where that works); otherwise cudaMalloc memory
/// (exportable through runtime IPC). The memory lives as long as any copy of `memory()`.
template <class T = char>
class GpuBuffer {
 public:
  /// `nelems` elements on the current device; 0 gives a null `data()`.
  GpuBuffer(size_t nelems);

  size_t nelems() const { return nelems_; }
  /// Bytes actually allocated, possibly more than nelems() * sizeof(T).
  size_t bytes() const { return bytes_; }
  std::shared_ptr<T> memory() { return memory_; }
  T* data() { return memory_.get(); }
  int deviceId() const { return deviceId_; }

 private:
  size_t nelems_;
  size_t bytes_;
  int deviceId_;
  std::shared_ptr<T> memory_;
};

namespace detail {
/// How GpuBuffer allocates `bytes` on the current device: returns the memory and the bytes allocated.
std::shared_ptr<void> gpuBufferAllocate(size_t bytes, size_t& allocatedBytes);
}  // namespace detail

template <class T>
GpuBuffer<T>::GpuBuffer(size_t nelems) : nelems_(nelems), bytes_(0), deviceId_(-1) {
  if (nelems == 0) return;
  MSCCLPP_CUDATHROW(cudaGetDevice(&deviceId_));
  std::shared_ptr<void> memory = detail::gpuBufferAllocate(nelems * sizeof(T), bytes_);
  memory_ = std::shared_ptr<T>(memory, static_cast<T*>(memory.get()));
}

GpuBuffer(size_t)->GpuBuffer<char>;

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_UTILS_HPP_
