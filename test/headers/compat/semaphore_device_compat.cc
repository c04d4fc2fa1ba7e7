// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/semaphore_device.hpp>

namespace compat {

static_assert(sizeof(mscclpp::Host2DeviceSemaphoreDeviceHandle) == 16);
static_assert(sizeof(mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle) == 32);

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useSemaphoreDevice(mscclpp::Host2DeviceSemaphoreDeviceHandle h2d,
                                   mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle d2d) {
  if (h2d.poll()) return;
  h2d.wait();
  h2d.wait(10);
  uint64_t sum = h2d.loadExpectedInbound() + h2d.incExpectedInbound() + h2d.loadInbound();
  d2d.signal();
  d2d.relaxedSignal();
  if (d2d.poll()) return;
  d2d.wait();
  d2d.relaxedWait(100);
  sum += d2d.loadExpectedInbound() + d2d.incExpectedInbound() + d2d.loadInbound() + d2d.loadInboundRelaxed() +
         d2d.loadOutbound() + d2d.incOutbound();
  *d2d.outboundToken = sum + *h2d.inboundToken + *h2d.expectedInboundToken + *d2d.inboundToken +
                       *d2d.remoteInboundToken + *d2d.expectedInboundToken;
  // Through atomic_device.hpp and poll_device.hpp.
  POLL_MAYBE_JAILBREAK((mscclpp::atomicLoad(d2d.inboundToken, mscclpp::memoryOrderAcquire) == 0), 10)
}
#endif

}  // namespace compat
