// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The element types of the extensions, in one table. Two public enums name them: collectives::DataType
// (collectives.hpp, numbered as ncclDataType_t, every type) and mscclpp::DataType (gpu_data_types.hpp,
// the executor's, as the reference has it, a subset). Every helper over either enum (size, name,
// conversion, the C++ type behind a value) is generated from the rows below, so adding a type is one
// row and the two enums cannot drift apart.

#ifndef MSCCLPP_EXT_COMMON_ELEMENT_TYPES_HPP_
#define MSCCLPP_EXT_COMMON_ELEMENT_TYPES_HPP_

#include <cstddef>
#include <cstdint>
#include <mscclpp/collectives.hpp>
#include <mscclpp/device.hpp>
#include <mscclpp/gpu_data_types.hpp>

namespace mscclpp {
namespace ext {

/// Stands for an FP8 type where the GPU toolkit has none (HIP before ROCm 6): it keeps the FP8 rows of
/// the table (their size and name stay known) while no arithmetic can be instantiated for them.
template <int Which>
struct MissingFp8 {
  uint8_t bits;
};

#if defined(__FP8_TYPES_EXIST__)
using Fp8E4M3Type = __fp8_e4m3;
using Fp8E5M2Type = __fp8_e5m2;
#else
using Fp8E4M3Type = MissingFp8<0>;
using Fp8E5M2Type = MissingFp8<1>;
#endif

}  // namespace ext
}  // namespace mscclpp

/// X(collectives::DataType enumerator, executor column, C++ type, bytes, name as nccl-tests prints it).
/// The executor column is MSCCLPP_EXECUTOR_TYPE(mscclpp::DataType enumerator), or MSCCLPP_NO_EXECUTOR_TYPE
/// for the types mscclpp::DataType does not have. Neither marker is a macro: a generator pastes the column
/// onto a prefix of its own (MSCCLPP_..._##E), which turns it into what that generator needs.
#define MSCCLPP_ELEMENT_TYPES(X)                                                        \
  X(Int8, MSCCLPP_NO_EXECUTOR_TYPE, int8_t, 1, "int8")                                  \
  X(Uint8, MSCCLPP_NO_EXECUTOR_TYPE, uint8_t, 1, "uint8")                               \
  X(Int32, MSCCLPP_EXECUTOR_TYPE(INT32), int32_t, 4, "int32")                           \
  X(Uint32, MSCCLPP_EXECUTOR_TYPE(UINT32), uint32_t, 4, "uint32")                       \
  X(Int64, MSCCLPP_NO_EXECUTOR_TYPE, int64_t, 8, "int64")                               \
  X(Uint64, MSCCLPP_NO_EXECUTOR_TYPE, uint64_t, 8, "uint64")                            \
  X(Float16, MSCCLPP_EXECUTOR_TYPE(FLOAT16), __half, 2, "half")                         \
  X(Float32, MSCCLPP_EXECUTOR_TYPE(FLOAT32), float, 4, "float")                         \
  X(Float64, MSCCLPP_NO_EXECUTOR_TYPE, double, 8, "double")                             \
  X(Bfloat16, MSCCLPP_EXECUTOR_TYPE(BFLOAT16), __bfloat16, 2, "bfloat16")               \
  X(Fp8E4M3, MSCCLPP_EXECUTOR_TYPE(FP8_E4M3), ::mscclpp::ext::Fp8E4M3Type, 1, "f8e4m3") \
  X(Fp8E5M2, MSCCLPP_EXECUTOR_TYPE(FP8_E5M2), ::mscclpp::ext::Fp8E5M2Type, 1, "f8e5m2")

namespace mscclpp {
namespace ext {

// ---- generated switches, usable on host and device ----

#define MSCCLPP_ELEMENT_SIZE_CASE(C, E, T, S, N) \
  case collectives::DataType::C:                 \
    return S;
/// Bytes of one element of `type`; 0 for a value that is not an enumerator (a caller's integer cast).
MSCCLPP_HOST_DEVICE_INLINE constexpr size_t elementSize(collectives::DataType type) {
  switch (type) { MSCCLPP_ELEMENT_TYPES(MSCCLPP_ELEMENT_SIZE_CASE) }
  return 0;
}
#undef MSCCLPP_ELEMENT_SIZE_CASE

#define MSCCLPP_ELEMENT_NAME_CASE(C, E, T, S, N) \
  case collectives::DataType::C:                 \
    return N;
/// The name nccl-tests prints ("half", "f8e4m3"); "unknown" for a value that is not an enumerator.
constexpr const char* elementName(collectives::DataType type) {
  switch (type) { MSCCLPP_ELEMENT_TYPES(MSCCLPP_ELEMENT_NAME_CASE) }
  return "unknown";
}
#undef MSCCLPP_ELEMENT_NAME_CASE

/// Whether `type` is one of collectives::DataType's enumerators.
MSCCLPP_HOST_DEVICE_INLINE constexpr bool isElementType(collectives::DataType type) { return elementSize(type) != 0; }

// The executor column: a case for the rows that have an executor type, nothing for the others. The
// pasted name expands to a macro that the row's (C) that follows then calls.
#define MSCCLPP_FROM_EXECUTOR_MSCCLPP_EXECUTOR_TYPE(E) \
  case ::mscclpp::DataType::E:                         \
    MSCCLPP_RETURN_COLLECTIVES_TYPE
#define MSCCLPP_RETURN_COLLECTIVES_TYPE(C) return collectives::DataType::C;
#define MSCCLPP_FROM_EXECUTOR_MSCCLPP_NO_EXECUTOR_TYPE MSCCLPP_SKIP_ROW
#define MSCCLPP_SKIP_ROW(C)
#define MSCCLPP_FROM_EXECUTOR_CASE(C, E, T, S, N) MSCCLPP_FROM_EXECUTOR_##E(C)
/// The collectives::DataType of the executor's `type` (every executor type has one); `fallback` for a
/// value that is not an enumerator.
MSCCLPP_HOST_DEVICE_INLINE constexpr collectives::DataType toCollectivesType(mscclpp::DataType type,
                                                                             collectives::DataType fallback) {
  switch (type) { MSCCLPP_ELEMENT_TYPES(MSCCLPP_FROM_EXECUTOR_CASE) }
  return fallback;
}
#undef MSCCLPP_FROM_EXECUTOR_CASE
#undef MSCCLPP_SKIP_ROW
#undef MSCCLPP_FROM_EXECUTOR_MSCCLPP_NO_EXECUTOR_TYPE
#undef MSCCLPP_RETURN_COLLECTIVES_TYPE
#undef MSCCLPP_FROM_EXECUTOR_MSCCLPP_EXECUTOR_TYPE

#define MSCCLPP_TO_EXECUTOR_MSCCLPP_EXECUTOR_TYPE(E) \
  out = ::mscclpp::DataType::E;                      \
  return true;
#define MSCCLPP_TO_EXECUTOR_MSCCLPP_NO_EXECUTOR_TYPE return false;
#define MSCCLPP_TO_EXECUTOR_CASE(C, E, T, S, N) \
  case collectives::DataType::C:                \
    MSCCLPP_TO_EXECUTOR_##E
/// The executor's DataType of `type` into `out`, where it has one; false (`out` untouched) otherwise.
MSCCLPP_HOST_DEVICE_INLINE constexpr bool toExecutorType(collectives::DataType type, mscclpp::DataType& out) {
  switch (type) { MSCCLPP_ELEMENT_TYPES(MSCCLPP_TO_EXECUTOR_CASE) }
  return false;
}
#undef MSCCLPP_TO_EXECUTOR_CASE
#undef MSCCLPP_TO_EXECUTOR_MSCCLPP_NO_EXECUTOR_TYPE
#undef MSCCLPP_TO_EXECUTOR_MSCCLPP_EXECUTOR_TYPE

/// Bytes of one element of the executor's `type`; 0 for a value that is not an enumerator.
MSCCLPP_HOST_DEVICE_INLINE constexpr size_t elementSize(mscclpp::DataType type) {
  return elementSize(toCollectivesType(type, static_cast<collectives::DataType>(-1)));
}

/// The name of the executor's `type`, as for collectives::DataType.
constexpr const char* elementName(mscclpp::DataType type) {
  return elementName(toCollectivesType(type, static_cast<collectives::DataType>(-1)));
}

/// Whether `type` is one of mscclpp::DataType's enumerators.
MSCCLPP_HOST_DEVICE_INLINE constexpr bool isElementType(mscclpp::DataType type) { return elementSize(type) != 0; }

/// A C++ element type carried as a value, for generic lambdas: `withElementType(t, [&](auto tag) {
/// using T = typename decltype(tag)::Type; ... })`.
template <typename T>
struct ElementTag {
  using Type = T;
};

/// Whether arithmetic exists for T (false only for the FP8 stand-ins of a toolkit without FP8).
template <typename T>
inline constexpr bool kHasArithmetic = true;
template <int Which>
inline constexpr bool kHasArithmetic<MissingFp8<Which>> = false;

#define MSCCLPP_ELEMENT_TAG_CASE(C, E, T, S, N) \
  case collectives::DataType::C:                \
    fn(ElementTag<T>{});                        \
    return true;
/// Calls fn(ElementTag<T>{}) with the C++ type of `type`; false (fn not called) for a value that is not
/// an enumerator. fn must accept every row's tag (kHasArithmetic says which ones have no arithmetic).
template <typename Fn>
MSCCLPP_HOST_DEVICE_INLINE bool withElementType(collectives::DataType type, Fn&& fn) {
  switch (type) { MSCCLPP_ELEMENT_TYPES(MSCCLPP_ELEMENT_TAG_CASE) }
  return false;
}
#undef MSCCLPP_ELEMENT_TAG_CASE

/// The same for the executor's enum.
template <typename Fn>
MSCCLPP_HOST_DEVICE_INLINE bool withElementType(mscclpp::DataType type, Fn&& fn) {
  return withElementType(toCollectivesType(type, static_cast<collectives::DataType>(-1)), static_cast<Fn&&>(fn));
}

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_ELEMENT_TYPES_HPP_
