// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/memory_channel_device.hpp>

namespace compat {

static_assert(sizeof(mscclpp::BaseMemoryChannelDeviceHandle) == 32);
static_assert(sizeof(mscclpp::MemoryChannelDeviceHandle) == 56);

#if defined(MSCCLPP_DEVICE_COMPILE)
// Arguments typed as the signatures declare them: with plain int literals the two-offset and the
// one-offset overloads of unpackPackets() are ambiguous, in MSCCL++ as here.
__global__ void useMemoryChannelDevice(mscclpp::BaseMemoryChannelDeviceHandle base,
                                       mscclpp::MemoryChannelDeviceHandle ch, uint64_t offset, uint64_t bytes,
                                       uint32_t flag) {
  base.signal();
  base.relaxedSignal();
  if (base.poll()) return;
  base.wait();
  base.relaxedWait(5);
  ch.put(0, 64, 128, threadIdx.x, blockDim.x);
  ch.put<8, false>(0, 128, threadIdx.x, blockDim.x);
  ch.get(0, 64, 128, threadIdx.x, blockDim.x);
  ch.get<4>(0, 128, threadIdx.x, blockDim.x);
  ch.putPackets(0, 0, 64, threadIdx.x, blockDim.x, 1);
  ch.putPackets<mscclpp::LL8Packet>(0, 64, threadIdx.x, blockDim.x, 1);
  ch.unpackPackets(offset, offset, bytes, threadIdx.x, blockDim.x, flag);
  ch.unpackPackets<mscclpp::LL8Packet>(0, 64, threadIdx.x, blockDim.x, 1, 100);
  uint2 v = ch.unpackPacket(0, 1);
  uint32_t w = ch.unpackPacket<mscclpp::LL8Packet>(0, 1, 10);
  ch.write<uint32_t>(0, v.x + w + ch.read<uint32_t>(1));
  ch.signal();
  ch.wait();
  // Through semaphore_device.hpp and copy_device.hpp.
  mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle semaphore = ch.semaphore_;
  semaphore.signal();
  mscclpp::copy(ch.dst_, ch.src_, 64, threadIdx.x, blockDim.x);
}
#endif

}  // namespace compat
