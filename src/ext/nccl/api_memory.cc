// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// ncclMemAlloc and ncclMemFree. Every allocation handed out is recorded (start and size), so that
// ncclMemFree frees only what ncclMemAlloc returned: a pointer inside an allocation, one freed
// already or one from elsewhere is refused, and the allocation it may point into stays usable.
// Unmapping by address alone would take the whole allocation that holds the pointer.

#include <cstdint>
#include <iterator>
#include <map>
#include <mscclpp/gpu_utils.hpp>
#include <mutex>
#include <string>

#include "ext/nccl/api_functions.hpp"
#include "ext/nccl/status.hpp"

using mscclpp::nccl::apiCall;

namespace {

struct Allocations {
  std::mutex mutex;
  std::map<uintptr_t, size_t> sizeByStart;
};

Allocations& allocations() {
  // Never destroyed: ncclMemFree may run from other libraries' exit-time destructors.
  static Allocations* instance = new Allocations;
  return *instance;
}

/// Why `ptr` cannot be freed, naming the allocation it lies inside, if any. Called with the lock held.
std::string notAnAllocation(const std::map<uintptr_t, size_t>& sizeByStart, const void* ptr) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto next = sizeByStart.upper_bound(address);
  if (next != sizeByStart.begin()) {
    auto holder = std::prev(next);
    if (address - holder->first < holder->second) {
      return mscclpp::concat("ptr ", ptr, " lies ", address - holder->first, " bytes inside the allocation at ",
                             reinterpret_cast<const void*>(holder->first), " of ", holder->second,
                             " bytes; only the pointer ncclMemAlloc returned can be freed");
    }
  }
  return mscclpp::concat("ptr ", ptr, " was not returned by ncclMemAlloc, or it was freed already");
}

}  // namespace

extern "C" {

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  NCCL_REQUIRE(__func__, ptr != nullptr, nullptr, ncclInvalidArgument, "ptr is NULL");
  if (size == 0) {
    *ptr = nullptr;
    return ncclSuccess;
  }
  return apiCall(nullptr, __func__, [&]() {
    void* allocation = mscclpp::detail::gpuCallocPhysical(size);
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.sizeByStart[reinterpret_cast<uintptr_t>(allocation)] = size;
    *ptr = allocation;
    return ncclSuccess;
  });
}

ncclResult_t ncclMemFree(void* ptr) {
  if (ptr == nullptr) return ncclSuccess;
  Allocations& all = allocations();
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    auto it = all.sizeByStart.find(reinterpret_cast<uintptr_t>(ptr));
    NCCL_REQUIRE(__func__, it != all.sizeByStart.end(), nullptr, ncclInvalidArgument,
                 notAnAllocation(all.sizeByStart, ptr));
    // Taken off before the memory goes, so that a concurrent second free of it is refused.
    all.sizeByStart.erase(it);
  }
  return apiCall(nullptr, __func__, [&]() {
    mscclpp::detail::gpuFreePhysical(ptr);
    return ncclSuccess;
  });
}

}  // extern "C"
