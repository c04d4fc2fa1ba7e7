// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Host reference of the collectives' arithmetic, written from the definitions rather than from the
// kernels: integers wrap in their own width, floating types are combined in double and rounded once
// to the element type. Plus the deterministic inputs the tests give each rank, so that every rank
// can compute every other rank's input, and hence the expected result, without communicating.

#ifndef MSCCLPP_TEST_COMMON_COLLECTIVES_REFERENCE_HPP_
#define MSCCLPP_TEST_COMMON_COLLECTIVES_REFERENCE_HPP_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mscclpp/collectives.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mscclpp::test {

using collectives::DataType;
using collectives::ReduceOp;

/// A host value of one element, converted to and from double (integers exactly, in 64 bits).
struct Element {
  DataType type;
  uint64_t bits = 0;
};

inline double toDouble(DataType type, const void* p) {
  switch (type) {
    case DataType::Int8:
      return *static_cast<const int8_t*>(p);
    case DataType::Uint8:
      return *static_cast<const uint8_t*>(p);
    case DataType::Int32:
      return *static_cast<const int32_t*>(p);
    case DataType::Uint32:
      return *static_cast<const uint32_t*>(p);
    case DataType::Int64:
      return static_cast<double>(*static_cast<const int64_t*>(p));
    case DataType::Uint64:
      return static_cast<double>(*static_cast<const uint64_t*>(p));
    case DataType::Float16:
      return __half2float(*static_cast<const __half*>(p));
    case DataType::Float32:
      return *static_cast<const float*>(p);
    case DataType::Float64:
      return *static_cast<const double*>(p);
    case DataType::Bfloat16:
      return __bfloat162float(*static_cast<const __nv_bfloat16*>(p));
    case DataType::Fp8E4M3:
      return static_cast<float>(*static_cast<const __nv_fp8_e4m3*>(p));
    case DataType::Fp8E5M2:
      return static_cast<float>(*static_cast<const __nv_fp8_e5m2*>(p));
  }
  return 0;
}

/// Stores `v` (rounded to nearest for floating types) as an element of `type` at p.
inline void fromDouble(DataType type, double v, void* p) {
  switch (type) {
    case DataType::Int8:
      *static_cast<int8_t*>(p) = static_cast<int8_t>(static_cast<int64_t>(v));
      return;
    case DataType::Uint8:
      *static_cast<uint8_t*>(p) = static_cast<uint8_t>(static_cast<int64_t>(v));
      return;
    case DataType::Int32:
      *static_cast<int32_t*>(p) = static_cast<int32_t>(static_cast<int64_t>(v));
      return;
    case DataType::Uint32:
      *static_cast<uint32_t*>(p) = static_cast<uint32_t>(static_cast<int64_t>(v));
      return;
    case DataType::Int64:
      *static_cast<int64_t*>(p) = static_cast<int64_t>(v);
      return;
    case DataType::Uint64:
      *static_cast<uint64_t*>(p) = static_cast<uint64_t>(static_cast<int64_t>(v));
      return;
    case DataType::Float16:
      *static_cast<__half*>(p) = __double2half(v);
      return;
    case DataType::Float32:
      *static_cast<float*>(p) = static_cast<float>(v);
      return;
    case DataType::Float64:
      *static_cast<double*>(p) = v;
      return;
    case DataType::Bfloat16:
      *static_cast<__nv_bfloat16*>(p) = __double2bfloat16(v);
      return;
    case DataType::Fp8E4M3:
      *static_cast<__nv_fp8_e4m3*>(p) = __nv_fp8_e4m3(v);
      return;
    case DataType::Fp8E5M2:
      *static_cast<__nv_fp8_e5m2*>(p) = __nv_fp8_e5m2(v);
      return;
  }
}

inline bool isIntegral(DataType type) {
  switch (type) {
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Int64:
    case DataType::Uint64:
      return true;
    case DataType::Float16:
    case DataType::Float32:
    case DataType::Float64:
    case DataType::Bfloat16:
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
      return false;
  }
  return false;
}

inline bool isSigned(DataType type) {
  return type == DataType::Int8 || type == DataType::Int32 || type == DataType::Int64;
}

/// An integer element as the 64-bit pattern of its value (sign-extended for signed types).
inline uint64_t intBits(DataType type, const void* p) {
  switch (type) {
    case DataType::Int8:
      return static_cast<uint64_t>(static_cast<int64_t>(*static_cast<const int8_t*>(p)));
    case DataType::Uint8:
      return *static_cast<const uint8_t*>(p);
    case DataType::Int32:
      return static_cast<uint64_t>(static_cast<int64_t>(*static_cast<const int32_t*>(p)));
    case DataType::Uint32:
      return *static_cast<const uint32_t*>(p);
    case DataType::Int64:
    case DataType::Uint64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DataType::Float16:
    case DataType::Float32:
    case DataType::Float64:
    case DataType::Bfloat16:
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
      return 0;
  }
  return 0;
}

/// Stores the low bits of `v` as an element of integer `type` (wrap-around).
inline void storeIntBits(DataType type, uint64_t v, void* p) {
  std::memcpy(p, &v, collectives::dataTypeSize(type));  // little-endian: the low bytes
}

/// Sign-extends (or zero-extends) the low dataTypeSize bytes of v as the type's value.
inline int64_t signedValue(DataType type, uint64_t v) {
  switch (type) {
    case DataType::Int8:
      return static_cast<int8_t>(v);
    case DataType::Int32:
      return static_cast<int32_t>(v);
    case DataType::Uint8:
    case DataType::Uint32:
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Float16:
    case DataType::Float32:
    case DataType::Float64:
    case DataType::Bfloat16:
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
      return static_cast<int64_t>(v);
  }
  return static_cast<int64_t>(v);
}

/// The reduction of inputs[0..n-1] (one element each, of `type`, input q from rank q) under `op`,
/// stored at out. PreMulSum: scalars[q] is rank q's scalar (an element of `type`), and, as in NCCL,
/// rank q's input is multiplied by it and rounded to `type` before the sum. Other ops ignore scalars.
inline void referenceReduce(DataType type, ReduceOp::Kind op, const std::vector<const void*>& inputs,
                            const std::vector<const void*>& scalars, void* out) {
  const int n = static_cast<int>(inputs.size());
  if (isIntegral(type)) {
    const uint64_t mask =
        collectives::dataTypeSize(type) == 8 ? ~0ull : (1ull << (8 * collectives::dataTypeSize(type))) - 1;
    uint64_t acc = 0;
    for (int q = 0; q < n; ++q) {
      const uint64_t x = intBits(type, inputs[q]);
      const uint64_t s = op == ReduceOp::Kind::PreMulSum ? intBits(type, scalars.at(q)) : 1;
      switch (op) {
        case ReduceOp::Kind::Sum:
        case ReduceOp::Kind::Avg:
          acc = q == 0 ? x : acc + x;
          break;
        case ReduceOp::Kind::PreMulSum:
          acc = q == 0 ? s * x : acc + s * x;
          break;
        case ReduceOp::Kind::Prod:
          acc = q == 0 ? x : acc * x;
          break;
        case ReduceOp::Kind::Max:
        case ReduceOp::Kind::Min: {
          const bool less =
              isSigned(type) ? signedValue(type, x & mask) < signedValue(type, acc & mask) : (x & mask) < (acc & mask);
          const bool greater =
              isSigned(type) ? signedValue(type, x & mask) > signedValue(type, acc & mask) : (x & mask) > (acc & mask);
          if (q == 0 || (op == ReduceOp::Kind::Min ? less : greater)) acc = x;
          break;
        }
      }
    }
    if (op == ReduceOp::Kind::Avg) {
      acc = isSigned(type) ? static_cast<uint64_t>(signedValue(type, acc & mask) / n) : (acc & mask) / n;
    }
    storeIntBits(type, acc, out);
    return;
  }
  double acc = 0;
  for (int q = 0; q < n; ++q) {
    const double x = toDouble(type, inputs[q]);
    switch (op) {
      case ReduceOp::Kind::Sum:
      case ReduceOp::Kind::Avg:
        acc = q == 0 ? x : acc + x;
        break;
      case ReduceOp::Kind::PreMulSum: {
        std::vector<char> scaled(collectives::dataTypeSize(type));
        fromDouble(type, toDouble(type, scalars.at(q)) * x, scaled.data());
        const double y = toDouble(type, scaled.data());
        acc = q == 0 ? y : acc + y;
        break;
      }
      case ReduceOp::Kind::Prod:
        acc = q == 0 ? x : acc * x;
        break;
      case ReduceOp::Kind::Max:
        acc = q == 0 || x > acc ? x : acc;
        break;
      case ReduceOp::Kind::Min:
        acc = q == 0 || x < acc ? x : acc;
        break;
    }
  }
  if (op == ReduceOp::Kind::Avg) acc /= n;
  fromDouble(type, acc, out);
}

/// The bound within which a floating result must match the reference: the kernels combine in float
/// (double for double) and round once, the reference in double and rounds once, so the two differ by
/// at most one unit in the last place of the element type (from the two roundings of float).
inline double tolerance(DataType type, double reference) {
  double eps = 0;
  switch (type) {
    case DataType::Float16:
      eps = std::ldexp(1.0, -10);
      break;
    case DataType::Bfloat16:
      eps = std::ldexp(1.0, -7);
      break;
    case DataType::Fp8E4M3:
      eps = std::ldexp(1.0, -3);
      break;
    case DataType::Fp8E5M2:
      eps = std::ldexp(1.0, -2);
      break;
    case DataType::Float32:
      eps = std::ldexp(1.0, -22);
      break;
    case DataType::Float64:
      eps = std::ldexp(1.0, -50);
      break;
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Int64:
    case DataType::Uint64:
      return 0;
  }
  return eps * std::fabs(reference);
}

/// True if `got` equals `want` (integers: exactly; floating types: within tolerance()).
inline bool matches(DataType type, const void* got, const void* want) {
  if (isIntegral(type)) return std::memcmp(got, want, collectives::dataTypeSize(type)) == 0;
  const double g = toDouble(type, got), w = toDouble(type, want);
  return std::fabs(g - w) <= tolerance(type, w);
}

/// Which of seven small integers element i of rank r's input in test `seed` holds (testInputs says
/// which): a hash of (i, rank, seed) taken mod 7, so that it changes from element to element without a
/// short period and differs between ranks and between seeds at most positions. A collective that puts
/// an element at the wrong position, takes it from the wrong rank or leaves a previous call's data
/// behind leaves a wrong value in six cases out of seven.
inline int testValueIndex(int rank, uint64_t i, uint64_t seed) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(rank) + 1) * 0xC2B2AE3D27D4EB4Full ^
               (seed + 1) * 0x165667B19E3779F9ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<int>(x % 7);
}

/// The encoding in `type` of value index k (0..6) of the test inputs: k for unsigned types and k - 3
/// for signed and floating ones, a small integer exact in every type (fp8 included), so that sums and
/// products of a few ranks stay where the types can represent them or wrap exactly.
struct TestValueEncodings {
  char encoded[7][8] = {};

  explicit TestValueEncodings(DataType type) {
    const bool unsignedType = isIntegral(type) && !isSigned(type);
    for (int k = 0; k < 7; ++k) {
      const int64_t value = unsignedType ? k : k - 3;
      if (isIntegral(type)) {
        storeIntBits(type, static_cast<uint64_t>(value), encoded[k]);
      } else {
        fromDouble(type, static_cast<double>(value), encoded[k]);
      }
    }
  }
};

/// Rank r's input of `count` elements, from element `offset` of its sequence: element i holds value
/// index testValueIndex(r, offset + i, seed), encoded by TestValueEncodings.
inline std::vector<char> testInputs(DataType type, int rank, uint64_t count, uint64_t seed, uint64_t offset = 0) {
  const size_t es = collectives::dataTypeSize(type);
  // The encodings of the seven values, so that each element is one hash and one copy.
  const TestValueEncodings values(type);
  std::vector<char> v(count * es);
  for (uint64_t i = 0; i < count; ++i)
    std::memcpy(v.data() + i * es, values.encoded[testValueIndex(rank, offset + i, seed)], es);
  return v;
}

/// referenceReduce of the test inputs of ranks 0..n-1 (testInputs with one seed) at any element
/// position, without those inputs: each element of an input is one of seven values, so the reduction
/// of n of them is one of 7^n results. Up to kTabledRanks ranks, each result is computed by
/// referenceReduce the first time a position needs it and kept, so that a reduction of 64 MiB costs n
/// hashes per element rather than n conversions through double; above, every position calls
/// referenceReduce.
class TestInputReduction {
 public:
  /// 7^6 = 117,649 results of at most 8 bytes: under 1 MiB.
  static constexpr int kTabledRanks = 6;

  /// `scalars[q]`: rank q's PreMulSum scalar, an element of `type` (ignored by other ops).
  TestInputReduction(DataType type, ReduceOp::Kind op, int nRanks, uint64_t seed,
                     std::vector<std::vector<char>> scalars)
      : type_(type),
        op_(op),
        n_(nRanks),
        seed_(seed),
        es_(collectives::dataTypeSize(type)),
        values_(type),
        scalars_(std::move(scalars)),
        parts_(nRanks),
        scalarOf_(nRanks) {
    for (int q = 0; q < n_; ++q) scalarOf_[q] = scalars_.at(q).data();
    if (n_ <= kTabledRanks) {
      size_t entries = 1;
      for (int q = 0; q < n_; ++q) entries *= 7;
      results_.resize(entries * es_);
      known_.assign(entries, false);
    }
  }

  /// Stores the reduction of element `i` of every rank's input at out.
  void at(uint64_t i, void* out) {
    if (n_ > kTabledRanks) {
      for (int q = 0; q < n_; ++q) parts_[q] = values_.encoded[testValueIndex(q, i, seed_)];
      referenceReduce(type_, op_, parts_, scalarOf_, out);
      return;
    }
    size_t key = 0;
    for (int q = n_ - 1; q >= 0; --q) key = key * 7 + static_cast<size_t>(testValueIndex(q, i, seed_));
    char* result = results_.data() + key * es_;
    if (!known_[key]) {
      size_t rest = key;
      for (int q = 0; q < n_; ++q, rest /= 7) parts_[q] = values_.encoded[rest % 7];
      referenceReduce(type_, op_, parts_, scalarOf_, result);
      known_[key] = true;
    }
    std::memcpy(out, result, es_);
  }

  /// Elements [begin, begin + count) of the reduction, one after another at out.
  void fill(uint64_t begin, uint64_t count, void* out) {
    char* o = static_cast<char*>(out);
    for (uint64_t i = 0; i < count; ++i) at(begin + i, o + i * es_);
  }

 private:
  DataType type_;
  ReduceOp::Kind op_;
  int n_;
  uint64_t seed_;
  size_t es_;
  TestValueEncodings values_;
  std::vector<std::vector<char>> scalars_;
  std::vector<const void*> parts_, scalarOf_;
  std::vector<char> results_;
  std::vector<bool> known_;
};

/// The number of elements of `got` that do not match `want` (matches()), both `count` elements of
/// `type`, and the first of them in `first`. Equal bytes match, so the usual case, a correct result,
/// costs one memcmp.
inline uint64_t mismatches(DataType type, const void* got, const void* want, uint64_t count,
                           uint64_t* first = nullptr) {
  const size_t es = collectives::dataTypeSize(type);
  if (std::memcmp(got, want, count * es) == 0) return 0;
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (!matches(type, static_cast<const char*>(got) + i * es, static_cast<const char*>(want) + i * es)) {
      if (wrong++ == 0 && first != nullptr) *first = i;
    }
  }
  return wrong;
}

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_COMMON_COLLECTIVES_REFERENCE_HPP_
