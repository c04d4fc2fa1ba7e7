// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Element-wise sums of 32-bit words holding 4 / sizeof(T) elements of type T, and of the 8- and 16-byte
// vectors built from them: the arithmetic of the interpreter's reductions. Device code only.

#ifndef MSCCLPP_EXT_EXECUTOR_ELEMENT_SUM_HPP_
#define MSCCLPP_EXT_EXECUTOR_ELEMENT_SUM_HPP_

#include <cstdint>
#include <mscclpp/gpu_data_types.hpp>

namespace mscclpp::executor {

template <typename T>
struct WordAdd;

template <>
struct WordAdd<float> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    return __float_as_uint(__uint_as_float(a) + __uint_as_float(b));
  }
};

template <>
struct WordAdd<int32_t> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    return static_cast<uint32_t>(static_cast<int32_t>(a) + static_cast<int32_t>(b));
  }
};

template <>
struct WordAdd<uint32_t> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return a + b; }
};

template <>
struct WordAdd<__half> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    __half2 x = *reinterpret_cast<__half2*>(&a), y = *reinterpret_cast<__half2*>(&b);
    __half2 z = __hadd2(x, y);
    return *reinterpret_cast<uint32_t*>(&z);
  }
};

template <>
struct WordAdd<__bfloat16> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    __bfloat162 x = *reinterpret_cast<__bfloat162*>(&a), y = *reinterpret_cast<__bfloat162*>(&b);
    __bfloat162 z = __hadd2(x, y);
    return *reinterpret_cast<uint32_t*>(&z);
  }
};

#if defined(__FP8_TYPES_EXIST__) && defined(MSCCLPP_DEVICE_CUDA)
// FP8: each half of the word is two elements, added as half2 and rounded back (saturating).
template <__nv_fp8_interpretation_t Kind>
__device__ __forceinline__ uint32_t addFp8Word(uint32_t a, uint32_t b) {
  uint32_t out = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const __nv_fp8x2_storage_t x = static_cast<__nv_fp8x2_storage_t>(a >> (16 * h));
    const __nv_fp8x2_storage_t y = static_cast<__nv_fp8x2_storage_t>(b >> (16 * h));
    __half2 hx = __half2(__nv_cvt_fp8x2_to_halfraw2(x, Kind));
    __half2 hy = __half2(__nv_cvt_fp8x2_to_halfraw2(y, Kind));
    const __nv_fp8x2_storage_t z = __nv_cvt_halfraw2_to_fp8x2(__half2_raw(__hadd2(hx, hy)), __NV_SATFINITE, Kind);
    out |= static_cast<uint32_t>(z) << (16 * h);
  }
  return out;
}

template <>
struct WordAdd<__fp8_e4m3> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__NV_E4M3>(a, b); }
};

template <>
struct WordAdd<__fp8_e5m2> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__NV_E5M2>(a, b); }
};
#elif defined(__FP8_TYPES_EXIST__)
// HIP's FP8 types have no pair conversions: each of the four elements goes through float.
template <typename T>
__device__ __forceinline__ uint32_t addFp8Word(uint32_t a, uint32_t b) {
  uint32_t out = 0;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    T x, y;
    const uint8_t xb = static_cast<uint8_t>(a >> (8 * e)), yb = static_cast<uint8_t>(b >> (8 * e));
    memcpy(&x, &xb, 1);
    memcpy(&y, &yb, 1);
    const T z(static_cast<float>(x) + static_cast<float>(y));
    uint8_t zb;
    memcpy(&zb, &z, 1);
    out |= static_cast<uint32_t>(zb) << (8 * e);
  }
  return out;
}

template <>
struct WordAdd<__fp8_e4m3> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__fp8_e4m3>(a, b); }
};

template <>
struct WordAdd<__fp8_e5m2> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__fp8_e5m2>(a, b); }
};
#endif

template <typename T>
__device__ __forceinline__ uint4 add4(uint4 a, uint4 b) {
  return make_uint4(WordAdd<T>::add(a.x, b.x), WordAdd<T>::add(a.y, b.y), WordAdd<T>::add(a.z, b.z),
                    WordAdd<T>::add(a.w, b.w));
}

template <typename T>
__device__ __forceinline__ uint2 addPayload(uint2 a, uint2 b) {
  return make_uint2(WordAdd<T>::add(a.x, b.x), WordAdd<T>::add(a.y, b.y));
}

template <typename T>
__device__ __forceinline__ uint32_t addPayload(uint32_t a, uint32_t b) {
  return WordAdd<T>::add(a, b);
}

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_ELEMENT_SUM_HPP_
