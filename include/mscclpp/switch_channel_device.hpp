// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device handle of a SwitchChannel (switch_channel.hpp): a buffer bound to an NVLink multicast
// object, reachable through `mcPtr` with the multimem instructions (NVLink SHARP, sm_90 and newer).
// A load-reduce through mcPtr returns the sum over every GPU's buffer; a store through it writes all
// of them. The operations are relaxed at system scope: order them with a barrier or semaphore.
//
// The methods exist under nvcc only. This project does not create multicast objects on its shared
// machines (isNvlsSupported() reports false), so nothing in it calls them; they are kept for source
// compatibility and compiled for sm_90.

#ifndef MSCCLPP_SWITCH_CHANNEL_DEVICE_HPP_
#define MSCCLPP_SWITCH_CHANNEL_DEVICE_HPP_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "device.hpp"
#include "gpu.hpp"
#include "gpu_data_types.hpp"

#if defined(MSCCLPP_DEVICE_CUDA)
#include <cuda_fp16.h>
#endif

namespace mscclpp {

/// False for every T, but only once T is known: `static_assert(dependentFalse<T>, ...)` in the last
/// branch of an `if constexpr` chain fires only when that branch is instantiated (compilers before
/// CWG2518 reject a plain `static_assert(false)` there).
template <class>
constexpr bool dependentFalse = false;

/// 24 bytes.
struct SwitchChannelDeviceHandle {
  /// This GPU's own buffer (unicast address).
  void* devicePtr;
  /// The multicast address of the buffer.
  void* mcPtr;
  size_t bufferSize;

#if defined(MSCCLPP_DEVICE_CUDA)
  /// The sum over all GPUs of element `index` of the buffer viewed as an array of T (a VectorType
  /// such as f32x4 or bf16x8).
  template <typename T>
  MSCCLPP_DEVICE_INLINE T reduce(uint64_t index) {
    return multimemLoadReduce(reinterpret_cast<T*>(mcPtr) + index);
  }

  /// Stores `val` at element `index` of every GPU's buffer.
  template <typename T>
  MSCCLPP_DEVICE_INLINE void broadcast(uint64_t index, const T& val) {
    multimemStore(val, reinterpret_cast<T*>(mcPtr) + index);
  }

  /// multimem.ld_reduce.add on a multicast address. VectorType: i32x1, u32x1, f32x1/2/4, f16x2/4/8,
  /// bf16x2/4/8.
  template <typename VectorType>
  MSCCLPP_DEVICE_INLINE static VectorType multimemLoadReduce(VectorType* ptr);

  /// multimem.st of `val` to a multicast address; the element type is VectorType's (or, for a raw
  /// vector such as float4, T's). Supports the types of multimemLoadReduce and f64x1.
  template <typename VectorType, typename T>
  MSCCLPP_DEVICE_INLINE static void multimemStore(const VectorType& val, T* ptr);

  /// multimem.red.add of `val` into a multicast address; types as multimemLoadReduce (a raw vector
  /// such as float4 or uint2 takes its element type from T, e.g. float or __half2).
  template <typename VectorType, typename T>
  MSCCLPP_DEVICE_INLINE static void multimemStoreReduce(const VectorType& val, T* ptr);
#endif
};

}  // namespace mscclpp

#if defined(MSCCLPP_DEVICE_CUDA)
#include "impl/switch_channel_device_impl.hpp"
#endif

#endif  // MSCCLPP_SWITCH_CHANNEL_DEVICE_HPP_
