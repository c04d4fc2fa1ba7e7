// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/copy_device.hpp>

namespace compat {

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useCopyDevice(void* dst, void* src, void* packets) {
  mscclpp::copy(dst, src, 1024, threadIdx.x, blockDim.x);
  mscclpp::copy<8, false>(dst, src, 1024, threadIdx.x, blockDim.x);
  mscclpp::write<uint32_t>(dst, 1, mscclpp::read<uint32_t>(src, 2));
  mscclpp::copyToPackets(packets, src, 1024, threadIdx.x, blockDim.x, 1);
  mscclpp::copyToPackets<mscclpp::LL8Packet>(packets, src, 1024, threadIdx.x, blockDim.x, 1);
  mscclpp::copyFromPackets(dst, packets, 1024, threadIdx.x, blockDim.x, 1);
  mscclpp::copyFromPackets<mscclpp::LL8Packet>(dst, packets, 1024, threadIdx.x, blockDim.x, 1, 100);
}
#endif

}  // namespace compat
