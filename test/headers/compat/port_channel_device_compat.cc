// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/port_channel_device.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::SemaphoreId, uint32_t>);
static_assert(std::is_same_v<mscclpp::MemoryId, uint32_t>);
static_assert(sizeof(mscclpp::BasePortChannelDeviceHandle) == 64);
static_assert(sizeof(mscclpp::PortChannelDeviceHandle) == 72);

#if defined(MSCCLPP_DEVICE_COMPILE)
// Arguments typed as the signatures declare them: with plain int literals the two putWithSignalAndFlush()
// forms of the base handle are ambiguous, in MSCCL++ as here.
__global__ void usePortChannelDevice(mscclpp::BasePortChannelDeviceHandle base, mscclpp::PortChannelDeviceHandle ch,
                                     mscclpp::MemoryId dst, mscclpp::MemoryId src, uint64_t offset, uint64_t size) {
  base.put(1, 0, 2, 0, 64);
  base.put(1, 2, 0, 64);
  base.signal();
  base.putWithSignal(1, 0, 2, 0, 64);
  base.putWithSignal(1, 2, 0, 64);
  base.putWithSignalAndFlush(dst, offset, src, offset, size);
  base.putWithSignalAndFlush(dst, src, offset, size, int64_t{1000});
  base.flush();
  base.flush(10);
  if (base.poll()) return;
  base.wait();
  base.wait(10);
  ch.put(0, 0, 64);
  ch.put(0, 64);
  ch.putWithSignal(0, 0, 64);
  ch.putWithSignal(0, 64);
  ch.putWithSignalAndFlush(0, 0, 64);
  ch.putWithSignalAndFlush(0, 64);
  ch.signal();
  ch.flush();
  ch.wait();
  // Through fifo_device.hpp and semaphore_device.hpp.
  ch.fifo_.push(mscclpp::ProxyTrigger(mscclpp::TriggerData, ch.dst_, 0, ch.src_, 0, 64, ch.semaphoreId_));
  ch.semaphore_.wait();
}
#endif

}  // namespace compat
