// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/memory_channel.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::MemoryChannel::DeviceHandle, mscclpp::MemoryChannelDeviceHandle>);
static_assert(std::is_same_v<mscclpp::BaseMemoryChannel::DeviceHandle, mscclpp::BaseMemoryChannelDeviceHandle>);
static_assert(std::is_base_of_v<mscclpp::BaseMemoryChannel, mscclpp::MemoryChannel>);
static_assert(std::is_copy_constructible_v<mscclpp::MemoryChannel>);

// MSCCL++ declares the channels as structs: forward declarations and derivations with that key.
}  // namespace compat
namespace mscclpp {
struct MemoryChannel;
struct BaseMemoryChannel;
}  // namespace mscclpp
namespace compat {

struct UserChannel : mscclpp::MemoryChannel {
  using mscclpp::MemoryChannel::MemoryChannel;
};

void useMemoryChannels(const mscclpp::Semaphore& sem, mscclpp::RegisteredMemory dst, mscclpp::RegisteredMemory src) {
  auto semaphore = std::make_shared<mscclpp::MemoryDevice2DeviceSemaphore>(sem);
  mscclpp::BaseMemoryChannel base(semaphore);
  mscclpp::BaseMemoryChannel fromSemaphore(sem);
  mscclpp::MemoryChannel channel(semaphore, dst, src);
  mscclpp::MemoryChannel withPackets(sem, dst, src, nullptr);
  std::vector<mscclpp::MemoryChannel> channels{channel, withPackets};
  mscclpp::MemoryChannelDeviceHandle handle = channels[0].deviceHandle();
  mscclpp::BaseMemoryChannelDeviceHandle baseHandle = base.deviceHandle();
  (void)fromSemaphore.deviceHandle();
  (void)handle;
  (void)baseHandle;
  // Through semaphore.hpp and gpu_utils.hpp.
  mscclpp::GpuBuffer<char> buffer(64);
  MSCCLPP_CUDATHROW(cudaGetLastError());
  std::shared_ptr<uint64_t> flag = mscclpp::detail::gpuCallocHostShared<uint64_t>();
}

}  // namespace compat
