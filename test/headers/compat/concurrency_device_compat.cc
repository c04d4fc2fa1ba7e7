// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/concurrency_device.hpp>
#include <type_traits>

namespace compat {

static_assert(mscclpp::DeviceSyncer::NumCounters == 3);
static_assert(sizeof(mscclpp::DeviceSyncer) == 16 && sizeof(mscclpp::DeviceSemaphore) == 4);
static_assert(std::is_trivially_default_constructible_v<mscclpp::DeviceSyncer>);

mscclpp::DeviceSemaphore makeSemaphore() { return mscclpp::DeviceSemaphore(3); }

// Through atomic_device.hpp, in host compilation too.
unsigned int useAtomicsOnHost(unsigned int* word) {
  return mscclpp::atomicFetchAdd(word, 1u, mscclpp::memoryOrderRelaxed);
}

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useConcurrencyDevice(mscclpp::DeviceSyncer* syncer, mscclpp::DeviceSemaphore* semaphore,
                                     volatile int* flag) {
  syncer->sync(gridDim.x);
  syncer->sync(gridDim.x, 1000);
  semaphore->set(1);
  semaphore->acquire();
  int spins = 100;
  semaphore->acquire(spins);
  semaphore->release();
  // Through poll_device.hpp.
  POLL_MAYBE_JAILBREAK((*flag == 0), 10)
}
#endif

}  // namespace compat
