// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/gpu_data_types.hpp>
#include <type_traits>

namespace compat {

static_assert(sizeof(mscclpp::Words<16>) == 16 && alignof(mscclpp::Words<16>) == 16);
static_assert(sizeof(mscclpp::Words<4>::w) == 4);
static_assert(mscclpp::f16x8::Size == 8 && std::is_same_v<mscclpp::f16x8::ElementType, __half>);
static_assert(sizeof(mscclpp::VectorType<__bfloat16, 4>) == 8);
static_assert(sizeof(mscclpp::i32x1) == 4 && sizeof(mscclpp::u32x1) == 4 && sizeof(mscclpp::f64x1) == 8 &&
              sizeof(mscclpp::f32x1) == 4 && sizeof(mscclpp::i32x2) == 8 && sizeof(mscclpp::u32x2) == 8 &&
              sizeof(mscclpp::f32x2) == 8 && sizeof(mscclpp::f16x2) == 4 && sizeof(mscclpp::bf16x2) == 4 &&
              sizeof(mscclpp::i32x4) == 16 && sizeof(mscclpp::u32x4) == 16 && sizeof(mscclpp::f32x4) == 16 &&
              sizeof(mscclpp::f16x4) == 8 && sizeof(mscclpp::bf16x4) == 8 && sizeof(mscclpp::bf16x8) == 16);
#if defined(__FP8_TYPES_EXIST__)
static_assert(sizeof(mscclpp::fp8_e4m3x2) == 2 && sizeof(mscclpp::fp8_e4m3x4) == 4 &&
              sizeof(mscclpp::fp8_e4m3x8) == 8 && sizeof(mscclpp::fp8_e5m2x2) == 2 &&
              sizeof(mscclpp::fp8_e5m2x4) == 4 && sizeof(mscclpp::fp8_e5m2x8) == 8);
static_assert(sizeof(__fp8_e4m3) == 1 && sizeof(__fp8_e5m2) == 1 && sizeof(__fp8x2_e4m3) == 2 &&
              sizeof(__fp8x4_e5m2) == 4);
#endif
static_assert(sizeof(__bfloat162) == 4);

// cudaStream_t comes through this header too.
cudaStream_t noStream() { return nullptr; }

MSCCLPP_HOST_DEVICE_INLINE float sum(const mscclpp::f32x4& v) {
  const float* p = v;
  return p[0] + v[1] + v.data[2] + static_cast<float>(v.words[3]);
}

float useVectors() {
  mscclpp::f32x4 v;
  for (int i = 0; i < mscclpp::f32x4::Size; ++i) v[i] = 1.0f;
  mscclpp::Words<8> words;
  words[0] = 1;
  words.w[1] = 2;
  mscclpp::DataType type = mscclpp::DataType::BFLOAT16;
  return sum(v) + static_cast<float>(words[0] + words[1]) + static_cast<float>(type == mscclpp::DataType::INT32);
}

}  // namespace compat
