// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Inline bodies of switch_channel_device.hpp (nvcc only): maps a vector type to the PTX element type
// and register count of the multimem instruction that moves it.

#ifndef MSCCLPP_IMPL_SWITCH_CHANNEL_DEVICE_IMPL_HPP_
#define MSCCLPP_IMPL_SWITCH_CHANNEL_DEVICE_IMPL_HPP_

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../arch/multimem_sm90.hpp"
#include "../gpu_data_types.hpp"
#include "../switch_channel_device.hpp"

// Device compilation only: a host compiler sees the declarations alone.
#if defined(MSCCLPP_DEVICE_CUDA)

namespace mscclpp {

namespace detail {

template <typename T, typename = void>
struct MultimemScalarOf {
  using type = T;
};
template <typename T>
struct MultimemScalarOf<T, std::void_t<typename T::ElementType>> {
  using type = typename T::ElementType;
};
template <>
struct MultimemScalarOf<__half2, void> {
  using type = __half;
};
template <>
struct MultimemScalarOf<__bfloat162, void> {
  using type = __bfloat16;
};
template <>
struct MultimemScalarOf<float2, void> {
  using type = float;
};
template <>
struct MultimemScalarOf<float4, void> {
  using type = float;
};

template <typename Scalar>
struct MultimemPtxOf {
  static_assert(dependentFalse<Scalar>, "multimem supports int32, uint32, float, half, bfloat16 (and double stores)");
};
template <>
struct MultimemPtxOf<int32_t> {
  using type = arch::PtxS32;
};
template <>
struct MultimemPtxOf<uint32_t> {
  using type = arch::PtxU32;
};
template <>
struct MultimemPtxOf<float> {
  using type = arch::PtxF32;
};
template <>
struct MultimemPtxOf<__half> {
  using type = arch::PtxF16x2;
};
template <>
struct MultimemPtxOf<__bfloat16> {
  using type = arch::PtxBF16x2;
};
template <>
struct MultimemPtxOf<double> {
  using type = arch::PtxF64;
};

/// The PTX type for moving a V through a pointer to P: V's own element type when V is a vector type
/// of this library, else P's.
template <typename V, typename P>
using MultimemPtx =
    typename MultimemPtxOf<typename std::conditional_t<std::is_same_v<typename MultimemScalarOf<V>::type, V>,
                                                       MultimemScalarOf<P>, MultimemScalarOf<V>>::type>::type;

/// Number of 32-bit registers a V occupies (a variable, not a function, so that device code may use it
/// without --expt-relaxed-constexpr).
template <typename V>
struct MultimemRegs {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16, "multimem moves 4, 8 or 16 bytes");
  static constexpr int value = static_cast<int>(sizeof(V) / 4);
};

}  // namespace detail

template <typename VectorType>
MSCCLPP_DEVICE_INLINE VectorType SwitchChannelDeviceHandle::multimemLoadReduce(VectorType* ptr) {
  constexpr int numRegs = detail::MultimemRegs<VectorType>::value;
  uint32_t regs[numRegs];
  arch::MultimemLdReduceAdd<detail::MultimemPtx<VectorType, VectorType>, numRegs>::load(regs, ptr);
  VectorType val;
  memcpy(&val, regs, sizeof(val));
  return val;
}

template <typename VectorType, typename T>
MSCCLPP_DEVICE_INLINE void SwitchChannelDeviceHandle::multimemStore(const VectorType& val, T* ptr) {
  constexpr int numRegs = detail::MultimemRegs<VectorType>::value;
  uint32_t regs[numRegs];
  memcpy(regs, &val, sizeof(val));
  arch::MultimemSt<detail::MultimemPtx<VectorType, T>, numRegs>::store(ptr, regs);
}

template <typename VectorType, typename T>
MSCCLPP_DEVICE_INLINE void SwitchChannelDeviceHandle::multimemStoreReduce(const VectorType& val, T* ptr) {
  constexpr int numRegs = detail::MultimemRegs<VectorType>::value;
  uint32_t regs[numRegs];
  memcpy(regs, &val, sizeof(val));
  arch::MultimemRedAdd<detail::MultimemPtx<VectorType, T>, numRegs>::reduce(ptr, regs);
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_DEVICE_CUDA)

#endif  // MSCCLPP_IMPL_SWITCH_CHANNEL_DEVICE_IMPL_HPP_
