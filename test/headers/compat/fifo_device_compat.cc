// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/fifo_device.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::TriggerType, uint64_t>);
static_assert(mscclpp::TriggerData == 0x1 && mscclpp::TriggerFlag == 0x2 && mscclpp::TriggerSync == 0x4);
static_assert(mscclpp::TriggerBitsSize == 32 && mscclpp::TriggerBitsOffset == 32 && mscclpp::TriggerBitsMemoryId == 9 &&
              mscclpp::TriggerBitsType == 3 && mscclpp::TriggerBitsSemaphoreId == 10 &&
              mscclpp::TriggerBitsFifoReserved == 1);
static_assert(sizeof(mscclpp::ProxyTrigger) == 32 && alignof(mscclpp::ProxyTrigger) == 16);
static_assert(sizeof(mscclpp::FifoDeviceHandle) == 40);

uint64_t useFifoHost(mscclpp::ProxyTrigger trigger, mscclpp::FifoDeviceHandle handle) {
  return trigger.fst + trigger.snd + trigger.fields.size + trigger.fields.srcOffset + trigger.fields.dstOffset +
         trigger.fields.srcMemoryId + trigger.fields.dstMemoryId + trigger.fields.type + trigger.fields.semaphoreId +
         *handle.head + *handle.tail + *handle.tailCache + static_cast<uint64_t>(handle.size) + handle.triggers->fst;
}

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useFifoDevice(mscclpp::FifoDeviceHandle fifo) {
  mscclpp::ProxyTrigger trigger(mscclpp::TriggerData | mscclpp::TriggerFlag, 1, 0, 2, 0, 64, 3);
  uint64_t head = fifo.push(trigger);
  head = fifo.push(trigger, 100);
  if (fifo.poll(head)) return;
  fifo.sync(head);
  fifo.sync(head, 100);
}
#endif

}  // namespace compat
