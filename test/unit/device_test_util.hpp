// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Small helpers shared by the device API tests: CUDA checks that fail the test with the error's name,
// and owners for the three kinds of memory the device handles point to. Kept apart from the library's
// own allocation helpers so that these tests exercise the device headers and nothing else.

#ifndef MSCCLPP_TEST_UNIT_DEVICE_TEST_UTIL_HPP_
#define MSCCLPP_TEST_UNIT_DEVICE_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/fifo_device.hpp>
#include <mscclpp/gpu.hpp>
#include <vector>

#include "common/gpu_test.hpp"

/// Fails the current test (and returns from it) unless `call` returns cudaSuccess.
#define MSCCLPP_TEST_CUDA(call)                                                                                      \
  do {                                                                                                               \
    cudaError_t mscclppTestErr_ = (call);                                                                            \
    ASSERT_EQ(mscclppTestErr_, cudaSuccess)                                                                          \
        << #call << ": " << cudaGetErrorName(mscclppTestErr_) << " (" << cudaGetErrorString(mscclppTestErr_) << ")"; \
  } while (0)

namespace mscclpp {
namespace devtest {

/// Zeroed device memory for `count` elements of T.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (cudaMalloc(&ptr_, bytes()) != cudaSuccess || cudaMemset(ptr_, 0, bytes()) != cudaSuccess) {
      ptr_ = nullptr;
    }
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  size_t bytes() const { return count_ * sizeof(T); }
  bool ok() const { return ptr_ != nullptr; }

  std::vector<T> toHost() const {
    std::vector<T> out(count_);
    if (cudaMemcpy(out.data(), ptr_, bytes(), cudaMemcpyDeviceToHost) != cudaSuccess) out.clear();
    return out;
  }
  bool fromHost(const std::vector<T>& in) const {
    return in.size() == count_ && cudaMemcpy(ptr_, in.data(), bytes(), cudaMemcpyHostToDevice) == cudaSuccess;
  }

 private:
  size_t count_;
  T* ptr_ = nullptr;
};

/// Zeroed pinned host memory mapped into the device's address space: `host()` for the CPU,
/// `device()` for kernels.
template <typename T>
class MappedHostBuffer {
 public:
  explicit MappedHostBuffer(size_t count) : count_(count) {
    void* p = nullptr;
    if (cudaHostAlloc(&p, count * sizeof(T), cudaHostAllocMapped) != cudaSuccess) return;
    host_ = static_cast<T*>(p);
    for (size_t i = 0; i < count; ++i) host_[i] = T{};
    void* d = nullptr;
    if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
      (void)cudaFreeHost(p);
      host_ = nullptr;
      return;
    }
    device_ = static_cast<T*>(d);
  }
  ~MappedHostBuffer() {
    if (host_ != nullptr) (void)cudaFreeHost(host_);
  }
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;

  T* host() const { return host_; }
  T* device() const { return device_; }
  bool ok() const { return host_ != nullptr; }

 private:
  size_t count_;
  T* host_ = nullptr;
  T* device_ = nullptr;
};

/// A proxy FIFO laid out the way the host Fifo lays it out (trigger slots and tail in mapped pinned host
/// memory, head and tailCache in device memory), with the proxy's side played by the test: pop()
/// takes the next trigger the way the proxy does.
class TestFifo {
 public:
  explicit TestFifo(int size) : size_(size), triggers_(size), tail_(1), head_(1), tailCache_(1) {}

  bool ok() const { return triggers_.ok() && tail_.ok() && head_.ok() && tailCache_.ok(); }

  FifoDeviceHandle deviceHandle() const {
    FifoDeviceHandle handle;
    handle.triggers = triggers_.device();
    handle.head = head_.get();
    handle.tail = tail_.device();
    handle.tailCache = tailCache_.get();
    handle.size = size_;
    return handle;
  }

  /// Waits until `deadline` for the slot at the tail to be filled, then returns its trigger with the
  /// valid bit cleared (`rawSnd` keeps snd as found in memory), empties the slot and advances the
  /// tail with release order. Returns false on timeout.
  bool pop(ProxyTrigger& out, uint64_t& rawSnd, std::chrono::steady_clock::time_point deadline) {
    const uint64_t tail = atomicLoad(tail_.host(), memoryOrderRelaxed);
    ProxyTrigger* slot = &triggers_.host()[tail % static_cast<uint64_t>(size_)];
    uint64_t fst = 0;
    uint64_t snd = 0;
    for (;;) {
      fst = atomicLoad(&slot->fst, memoryOrderAcquire);
      snd = atomicLoad(&slot->snd, memoryOrderRelaxed);
      if (fst != 0 && snd != 0) break;
      if (std::chrono::steady_clock::now() > deadline) return false;
    }
    out.fst = fst;
    out.snd = snd & ~detail::TriggerValidBitMask;
    rawSnd = snd;
    atomicStore(&slot->fst, uint64_t{0}, memoryOrderRelaxed);
    atomicStore(tail_.host(), tail + 1, memoryOrderRelease);
    return true;
  }

  uint64_t tail() const { return atomicLoad(tail_.host(), memoryOrderAcquire); }
  /// Device words, valid once the kernels using the FIFO have finished.
  uint64_t head() const { return head_.toHost().at(0); }
  uint64_t tailCache() const { return tailCache_.toHost().at(0); }
  const ProxyTrigger& slot(int i) const { return triggers_.host()[i]; }

 private:
  int size_;
  MappedHostBuffer<ProxyTrigger> triggers_;
  MappedHostBuffer<uint64_t> tail_;
  DeviceBuffer<uint64_t> head_;
  DeviceBuffer<uint64_t> tailCache_;
};

/// The number of multiprocessors of the current device (0 if unknown).
inline int multiprocessorCount() {
  int device = 0;
  int count = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
  return count;
}

}  // namespace devtest
}  // namespace mscclpp

#endif  // MSCCLPP_TEST_UNIT_DEVICE_TEST_UTIL_HPP_
