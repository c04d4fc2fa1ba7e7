// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The multimem helpers of SwitchChannelDeviceHandle assemble for the build's architectures: the kernel
// below instantiates every supported form, so ptxas checks each instruction when this file builds.
// It is never launched: that would need a multicast object, which this project never creates on its
// shared machines. The vector types of gpu_data_types.hpp are checked on the device as well.

#include <gtest/gtest.h>

#include <cstdint>
#include <mscclpp/switch_channel_device.hpp>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;

namespace {

template <typename V>
__device__ void allForms(SwitchChannelDeviceHandle& h, uint64_t i) {
  const V sum = h.reduce<V>(i);
  h.broadcast<V>(i + 1, sum);
  SwitchChannelDeviceHandle::multimemStoreReduce(sum, reinterpret_cast<V*>(h.mcPtr) + i + 2);
}

__global__ void multimemFormsKernel(SwitchChannelDeviceHandle h) {
  const uint64_t i = threadIdx.x * 8;
  allForms<i32x1>(h, i);
  allForms<u32x1>(h, i);
  allForms<f32x1>(h, i);
  allForms<f32x2>(h, i);
  allForms<f32x4>(h, i);
  allForms<f16x2>(h, i);
  allForms<f16x4>(h, i);
  allForms<f16x8>(h, i);
  allForms<bf16x2>(h, i);
  allForms<bf16x4>(h, i);
  allForms<bf16x8>(h, i);
  h.broadcast<f64x1>(i, f64x1());
  // Raw vectors take the element type from the pointer.
  SwitchChannelDeviceHandle::multimemStoreReduce(make_float4(1, 2, 3, 4), reinterpret_cast<float*>(h.mcPtr));
  SwitchChannelDeviceHandle::multimemStoreReduce(make_uint2(1, 2), reinterpret_cast<__half2*>(h.mcPtr));
}

__global__ void vectorTypesKernel(uint32_t* out) {
  f16x2 h;
  h[0] = __float2half(1.0f);
  h[1] = __float2half(-2.0f);
  out[0] = h.words[0];
  bf16x4 b;
  for (int k = 0; k < 4; ++k) b[k] = __float2bfloat16(static_cast<float>(k));
  out[1] = b.words[0];
  out[2] = b.words[1];
  u32x4 u;
  for (int k = 0; k < 4; ++k) u.data[k] = 10u + k;
  const uint32_t* asPointer = u;
  out[3] = asPointer[3];
}

}  // namespace

TEST(DeviceSwitchChannelTest, MultimemFormsAreBuiltForThisGpu) {
  MSCCLPP_REQUIRE_GPU();
  cudaFuncAttributes attributes{};
  MSCCLPP_TEST_CUDA(cudaFuncGetAttributes(&attributes, multimemFormsKernel));
  EXPECT_GE(attributes.binaryVersion, 90) << "multimem needs sm_90 code";
}

TEST(DeviceDataTypesTest, VectorTypesShareStorageBetweenElementsAndWords) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<uint32_t> out(4);
  ASSERT_TRUE(out.ok());
  vectorTypesKernel<<<1, 1>>>(out.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<uint32_t> o = out.toHost();
  EXPECT_EQ(o[0], 0xc0003c00u) << "f16 {1, -2}: element 0 in the low half of the word";
  EXPECT_EQ(o[1], 0x3f800000u) << "bf16 {0, 1}";
  EXPECT_EQ(o[2], 0x40404000u) << "bf16 {2, 3}";
  EXPECT_EQ(o[3], 13u);
}
