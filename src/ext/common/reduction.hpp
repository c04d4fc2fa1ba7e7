// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// A reduction as the extensions' kernels receive it from the host: the kind they branch on and what
// Avg and PreMulSum add to Sum. Host and device code include it; the arithmetic is in device_ops.hpp.

#ifndef MSCCLPP_EXT_COMMON_REDUCTION_HPP_
#define MSCCLPP_EXT_COMMON_REDUCTION_HPP_

#include <cstdint>

namespace mscclpp {
namespace ext {

/// The reductions a kernel is instantiated for. Avg and PreMulSum are Sum with the flags below.
enum class ReduceKind : int { Sum, Prod, Max, Min };

/// Passed by value to kernels, so a captured graph holds no pointer into host memory.
struct ReduceSpec {
  using Kind = ReduceKind;
  Kind kind = Kind::Sum;
  /// Avg: the sum divided by the rank count at the end.
  bool average = false;
  /// PreMulSum: each rank scales its own input by its own scalar (scalarBits or *scalarPtr) first.
  bool preMultiplies = false;
  /// The scalar's bits in the element type (low bytes), used unless scalarPtr is set.
  uint64_t scalarBits = 0;
  /// Device pointer to the scalar (PreMulSum with a device scalar), read by every launch.
  const void* scalarPtr = nullptr;
};

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_REDUCTION_HPP_
