// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/atomic_device.hpp>

namespace compat {

MSCCLPP_HOST_DEVICE_INLINE uint64_t useAtomics(uint64_t* word, const uint64_t* constWord) {
  mscclpp::atomicStore(word, uint64_t{1}, mscclpp::memoryOrderRelaxed);
  uint64_t old = mscclpp::atomicFetchAdd(word, uint64_t{1}, mscclpp::memoryOrderAcqRel);
  uint64_t loaded = mscclpp::atomicLoad(word, mscclpp::memoryOrderAcquire);
  uint64_t fromConst = mscclpp::atomicLoad(constWord, mscclpp::memoryOrderSeqCst);
  mscclpp::atomicStore<uint64_t, mscclpp::scopeDevice>(word, old + loaded + fromConst, mscclpp::memoryOrderRelease);
  return mscclpp::atomicLoad<uint64_t, mscclpp::scopeSystem>(word, mscclpp::memoryOrderRelaxed);
}

uint64_t useAtomicsOnHost(uint64_t* word) { return useAtomics(word, word); }

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useAtomicsOnDevice(uint64_t* word) { *word = useAtomics(word, word); }
#endif

}  // namespace compat
