// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Element types of collective operations and small vector types for moving them in registers.
//
// Provides the vendor-neutral names __bfloat16 and __bfloat162 and, where the toolkit has them, the
// FP8 types __fp8_e4m3 / __fp8_e5m2 with their x2 and x4 packs (then __FP8_TYPES_EXIST__ is defined).

#ifndef MSCCLPP_GPU_DATA_TYPES_HPP_
#define MSCCLPP_GPU_DATA_TYPES_HPP_

#include <cstdint>

#include "device.hpp"

#if defined(MSCCLPP_DEVICE_HIP)

#include <hip/hip_fp16.h>
#include <hip/hip_version.h>

#if __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
using __bfloat16 = __hip_bfloat16;
using __bfloat162 = __hip_bfloat162;
#else
// HIP 5 has only the scalar hip_bfloat16 (built from a float with round-to-nearest-even, read back as a
// float). The pair type and the few intrinsics the library's kernels use get their CUDA names here,
// with the same results.
#include <hip/hip_bfloat16.h>
using __bfloat16 = hip_bfloat16;
struct alignas(4) __bfloat162 {
  __bfloat16 x;
  __bfloat16 y;
};
MSCCLPP_HOST_DEVICE_INLINE float __bfloat162float(__bfloat16 a) { return static_cast<float>(a); }
MSCCLPP_HOST_DEVICE_INLINE __bfloat16 __float2bfloat16_rn(float a) { return __bfloat16(a); }
MSCCLPP_HOST_DEVICE_INLINE __bfloat162 __hadd2(__bfloat162 a, __bfloat162 b) {
  return {__float2bfloat16_rn(__bfloat162float(a.x) + __bfloat162float(b.x)),
          __float2bfloat16_rn(__bfloat162float(a.y) + __bfloat162float(b.y))};
}
#endif
#define __CUDA_BF16_TYPES_EXIST__

// ROCm 6 brings FP8 (the fnuz variants, gfx942 and newer); its x2/x4 packs are plain storage words.
#if defined(HIP_VERSION_MAJOR) && (HIP_VERSION_MAJOR >= 6)
#include <hip/hip_fp8.h>
using __fp8_e4m3 = __hip_fp8_e4m3_fnuz;
using __fp8_e5m2 = __hip_fp8_e5m2_fnuz;
using __fp8x2_e4m3 = __hip_fp8x2_storage_t;
using __fp8x2_e5m2 = __hip_fp8x2_storage_t;
using __fp8x4_e4m3 = __hip_fp8x4_storage_t;
using __fp8x4_e5m2 = __hip_fp8x4_storage_t;
#define __FP8_TYPES_EXIST__
#endif

#else

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#if (CUDART_VERSION >= 11000)
#include <cuda_bf16.h>
#endif
#if (CUDART_VERSION >= 11080)
#include <cuda_fp8.h>
using __fp8_e4m3 = __nv_fp8_e4m3;
using __fp8_e5m2 = __nv_fp8_e5m2;
using __fp8x2_e4m3 = __nv_fp8x2_e4m3;
using __fp8x2_e5m2 = __nv_fp8x2_e5m2;
using __fp8x4_e4m3 = __nv_fp8x4_e4m3;
using __fp8x4_e5m2 = __nv_fp8x4_e5m2;
#define __FP8_TYPES_EXIST__
#endif

using __bfloat16 = __nv_bfloat16;
using __bfloat162 = __nv_bfloat162;

#endif

namespace mscclpp {

/// Element type of a collective's buffers.
enum class DataType {
  INT32,
  UINT32,
  FLOAT16,
  FLOAT32,
  BFLOAT16,
  FP8_E4M3,
  FP8_E5M2,
};

namespace detail {

// The storage of Words<Bytes>: an array of 32-bit words where Bytes is a whole number of them, nothing
// otherwise (a VectorType of, say, two halves still has a `words` member, of no use).
template <int Bytes, bool WholeWords = (Bytes % 4 == 0)>
struct WordsStorage {
  uint32_t w[Bytes / 4];

  MSCCLPP_HOST_DEVICE_INLINE uint32_t& operator[](int i) { return w[i]; }
  MSCCLPP_HOST_DEVICE_INLINE const uint32_t& operator[](int i) const { return w[i]; }
};

template <int Bytes>
struct WordsStorage<Bytes, false> {};

}  // namespace detail

/// `Bytes` viewed as 32-bit words `w[Bytes / 4]` (for moving any vector through 32-bit registers, e.g.
/// in inline PTX). Sizes that are not a whole number of words have no word view.
template <int Bytes>
struct alignas(Bytes) Words : detail::WordsStorage<Bytes> {
  static_assert(Bytes > 0, "Bytes must be positive");

  MSCCLPP_HOST_DEVICE_INLINE Words() {}
};

/// N elements of T in one naturally aligned unit (sizeof(T) * N must be a power of two), readable as
/// elements (`data`, operator[]) or as 32-bit words (`words`).
template <typename T, int N>
union alignas(sizeof(T) * N) VectorType {
  static_assert(N > 0, "N must be positive");

  T data[N];
  Words<sizeof(T) * N> words;

  using ElementType = T;
  constexpr static int Size = N;

  MSCCLPP_HOST_DEVICE_INLINE VectorType() {}

  MSCCLPP_HOST_DEVICE_INLINE operator T*() { return data; }
  MSCCLPP_HOST_DEVICE_INLINE operator const T*() const { return data; }
  MSCCLPP_HOST_DEVICE_INLINE T& operator[](int i) { return data[i]; }
  MSCCLPP_HOST_DEVICE_INLINE const T& operator[](int i) const { return data[i]; }
};

using i32x1 = VectorType<int32_t, 1>;
using u32x1 = VectorType<uint32_t, 1>;
using f64x1 = VectorType<double, 1>;
using f32x1 = VectorType<float, 1>;

using i32x2 = VectorType<int32_t, 2>;
using u32x2 = VectorType<uint32_t, 2>;
using f32x2 = VectorType<float, 2>;
using f16x2 = VectorType<__half, 2>;
using bf16x2 = VectorType<__bfloat16, 2>;

using i32x4 = VectorType<int32_t, 4>;
using u32x4 = VectorType<uint32_t, 4>;
using f32x4 = VectorType<float, 4>;
using f16x4 = VectorType<__half, 4>;
using bf16x4 = VectorType<__bfloat16, 4>;

using f16x8 = VectorType<__half, 8>;
using bf16x8 = VectorType<__bfloat16, 8>;

#if defined(__FP8_TYPES_EXIST__)
using fp8_e4m3x2 = VectorType<__fp8_e4m3, 2>;
using fp8_e4m3x4 = VectorType<__fp8_e4m3, 4>;
using fp8_e4m3x8 = VectorType<__fp8_e4m3, 8>;
using fp8_e5m2x2 = VectorType<__fp8_e5m2, 2>;
using fp8_e5m2x4 = VectorType<__fp8_e5m2, 4>;
using fp8_e5m2x8 = VectorType<__fp8_e5m2, 8>;
#endif

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_DATA_TYPES_HPP_
