// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Inline bodies of fifo_device.hpp (device compilation only).

#ifndef MSCCLPP_IMPL_FIFO_DEVICE_IMPL_HPP_
#define MSCCLPP_IMPL_FIFO_DEVICE_IMPL_HPP_

#include "../arch/st_release_sm90.hpp"
#include "../assert_device.hpp"
#include "../atomic_device.hpp"
#include "../fifo_device.hpp"
#include "../poll_device.hpp"

// Device compilation only: a host compiler sees the declarations alone.
#if defined(MSCCLPP_DEVICE_COMPILE)

namespace mscclpp {

namespace detail {
constexpr unsigned int TriggerShiftSrcOffset = TriggerBitsSize;
constexpr unsigned int TriggerShiftSrcMemoryId = TriggerBitsOffset;
constexpr unsigned int TriggerShiftDstMemoryId = TriggerShiftSrcMemoryId + TriggerBitsMemoryId;
constexpr unsigned int TriggerShiftType = TriggerShiftDstMemoryId + TriggerBitsMemoryId;
constexpr unsigned int TriggerShiftSemaphoreId = TriggerShiftType + TriggerBitsType;
static_assert(TriggerShiftSemaphoreId + TriggerBitsSemaphoreId == 63, "bit 63 of snd must stay free for the valid bit");

MSCCLPP_DEVICE_INLINE uint64_t fifoLoadTail(const uint64_t* tail) {
  return atomicLoad<uint64_t, scopeSystem>(tail, memoryOrderAcquire);
}
}  // namespace detail

MSCCLPP_DEVICE_INLINE ProxyTrigger::ProxyTrigger(TriggerType type, uint32_t dst, uint64_t dstOffset, uint32_t src,
                                                 uint64_t srcOffset, uint64_t bytes, uint32_t semaphoreId) {
  MSCCLPP_ASSERT_DEVICE(type < (uint64_t{1} << TriggerBitsType), "trigger type does not fit its field");
  MSCCLPP_ASSERT_DEVICE(dst < (uint32_t{1} << TriggerBitsMemoryId), "destination memory id does not fit its field");
  MSCCLPP_ASSERT_DEVICE(src < (uint32_t{1} << TriggerBitsMemoryId), "source memory id does not fit its field");
  MSCCLPP_ASSERT_DEVICE(dstOffset < (uint64_t{1} << TriggerBitsOffset), "destination offset does not fit its field");
  MSCCLPP_ASSERT_DEVICE(srcOffset < (uint64_t{1} << TriggerBitsOffset), "source offset does not fit its field");
  MSCCLPP_ASSERT_DEVICE(bytes < (uint64_t{1} << TriggerBitsSize), "size does not fit its field");
  MSCCLPP_ASSERT_DEVICE(bytes != 0, "size must not be 0");
  MSCCLPP_ASSERT_DEVICE(semaphoreId < (uint32_t{1} << TriggerBitsSemaphoreId), "semaphore id does not fit its field");
  fst = (srcOffset << detail::TriggerShiftSrcOffset) | bytes;
  snd = dstOffset | (static_cast<uint64_t>(src) << detail::TriggerShiftSrcMemoryId) |
        (static_cast<uint64_t>(dst) << detail::TriggerShiftDstMemoryId) | (type << detail::TriggerShiftType) |
        (static_cast<uint64_t>(semaphoreId) << detail::TriggerShiftSemaphoreId);
}

MSCCLPP_DEVICE_INLINE uint64_t FifoDeviceHandle::push(ProxyTrigger trigger, int64_t maxSpinCount) {
  // The slot is reused from the request `size` positions earlier; the cached tail usually proves it
  // was popped without reading host memory. It is read before the fetch_add so that the two round
  // trips to memory overlap; an older cached tail is still a lower bound of the real one.
  const uint64_t cachedTail = atomicLoad<uint64_t, scopeDevice>(tailCache, memoryOrderRelaxed);
  const uint64_t prevHead = atomicFetchAdd<uint64_t, scopeDevice>(head, 1, memoryOrderRelaxed);
  trigger.snd ^= detail::TriggerValidBitMask;
  const uint64_t capacity = static_cast<uint64_t>(size);
  if (prevHead >= capacity + cachedTail) {
    sync(prevHead - capacity, maxSpinCount);
  }
  uint64_t* slot = reinterpret_cast<uint64_t*>(&triggers[prevHead % capacity]);
  arch::StReleaseSysGlobalV2U64::store(slot, trigger.fst, trigger.snd);
  return prevHead;
}

MSCCLPP_DEVICE_INLINE bool FifoDeviceHandle::poll(uint64_t fifoHead) {
  const uint64_t currentTail = detail::fifoLoadTail(tail);
  atomicStore<uint64_t, scopeDevice>(tailCache, currentTail, memoryOrderRelaxed);
  return currentTail > fifoHead;
}

MSCCLPP_DEVICE_INLINE void FifoDeviceHandle::sync(uint64_t fifoHead, int64_t maxSpinCount) {
  uint64_t currentTail;
  POLL_MAYBE_JAILBREAK(((currentTail = detail::fifoLoadTail(tail)) <= fifoHead), maxSpinCount)
  atomicStore<uint64_t, scopeDevice>(tailCache, currentTail, memoryOrderRelaxed);
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_DEVICE_COMPILE)

#endif  // MSCCLPP_IMPL_FIFO_DEVICE_IMPL_HPP_
