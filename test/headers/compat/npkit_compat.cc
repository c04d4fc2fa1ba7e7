// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/npkit/npkit.hpp>
#include <type_traits>

namespace compat {

static_assert(NpKit::kNumGpuEventBuffers == 1024 && NpKit::kNumCpuEventBuffers == 64);
static_assert(NPKIT_SHM_NUM_EVENTS == 64);
// Through npkit_event.hpp and npkit_struct.hpp.
static_assert(NPKIT_EVENT_CONN_CUDA_IPC_WRITE_ENTRY == 0x3);
static_assert(sizeof(NpKitEvent) == 16);

void useNpKit() {
  NpKit::Init(0);
  NpKit::CollectCpuEvent(NPKIT_EVENT_CONN_ETH_WRITE_ENTRY, 64, 0, *NpKit::GetCpuTimestamp(), 0);
  NpKitEventCollectContext* contexts = NpKit::GetGpuEventCollectContexts();
  (void)contexts;
  NpKit::Dump("/tmp");
  NpKit::Shutdown();
  // Through gpu_utils.hpp.
  mscclpp::detail::UniqueGpuPtr<NpKitEvent> events = mscclpp::detail::gpuCallocUnique<NpKitEvent>(4);
}

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useNpKitDevice(NpKitEventCollectContext* contexts) {
  __shared__ NpKitEvent events[NPKIT_SHM_NUM_EVENTS];
  __shared__ uint64_t head;
  NpKit::CollectGpuEventShm(NPKIT_EVENT_KERNEL_ALLREDUCE_ENTRY, 0, 0, NPKIT_GET_GPU_TIMESTAMP(), events, &head);
  NpKit::StoreGpuEventShm(contexts, events, head);
}
#endif

}  // namespace compat
