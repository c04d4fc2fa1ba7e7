// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/switch_channel_device.hpp>
#include <type_traits>

namespace compat {

static_assert(sizeof(mscclpp::SwitchChannelDeviceHandle) == 24);
static_assert(!mscclpp::dependentFalse<int>);
// Through <type_traits> and gpu_data_types.hpp.
static_assert(std::is_same_v<mscclpp::f32x4::ElementType, float>);

// Through gpu.hpp.
cudaStream_t noStream() { return nullptr; }

#if defined(MSCCLPP_DEVICE_CUDA)
__global__ void useSwitchChannelDevice(mscclpp::SwitchChannelDeviceHandle ch) {
  mscclpp::f32x4 v = ch.reduce<mscclpp::f32x4>(threadIdx.x);
  ch.broadcast<mscclpp::f32x4>(threadIdx.x, v);
  mscclpp::bf16x8 w =
      mscclpp::SwitchChannelDeviceHandle::multimemLoadReduce(reinterpret_cast<mscclpp::bf16x8*>(ch.mcPtr));
  mscclpp::SwitchChannelDeviceHandle::multimemStore(w, reinterpret_cast<mscclpp::bf16x8*>(ch.mcPtr));
  mscclpp::SwitchChannelDeviceHandle::multimemStoreReduce(v, reinterpret_cast<mscclpp::f32x4*>(ch.mcPtr));
  __half h = __float2half(1.0f);  // <cuda_fp16.h>
  (void)h;
}
#endif

}  // namespace compat
