// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What the extensions' kernels share (collectives and executor alike): how long a wait may spin, the
// arithmetic of every element type under every reduction, packed words of 4, 8 or 16 bytes reduced
// element by element, and block-cooperative byte copies. Device code only (include it from .cu files).
//
// Numerics, the same everywhere: integers combine in their own width with wrap-around (as NCCL does);
// fp16, bf16 and fp8 combine in float and float in float, double in double, with one rounding back to
// the element type at the end, so that a reduction of n inputs rounds once instead of n-1 times.
// PreMulSum scales a rank's own input by that rank's scalar, rounded to the element type (as NCCL's
// pre-operation does), before the input is combined or sent, so every rank sees the same scaled bits.

#ifndef MSCCLPP_EXT_COMMON_DEVICE_OPS_HPP_
#define MSCCLPP_EXT_COMMON_DEVICE_OPS_HPP_

#include <cstdint>
#include <mscclpp/device.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <type_traits>

#include "ext/common/reduction.hpp"

namespace mscclpp {
namespace ext {

/// Spins a wait for a peer may take before it gives up and traps (poll_device.hpp): 2^34 polls, minutes
/// on current GPUs. A peer may start its kernel much later than this rank (behind host work of its own,
/// or a debugger), and a wrong give-up kills a correct run, while a broken peer only costs the minutes.
constexpr int64_t kSpinLimit = int64_t{1} << 34;

// ---- element arithmetic ----

/// How T is combined: Acc is the type sums are kept in, toAcc/fromAcc convert (fromAcc rounds once).
template <typename T, typename Enable = void>
struct Arith {
  using Acc = float;
  __device__ __forceinline__ static Acc toAcc(T x) { return static_cast<float>(x); }
  __device__ __forceinline__ static T fromAcc(Acc a) { return T(a); }
  __device__ __forceinline__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ __forceinline__ static Acc mul(Acc a, Acc b) { return a * b; }
  __device__ __forceinline__ static Acc div(Acc a, int n) { return a / static_cast<Acc>(n); }
};

template <>
struct Arith<__half> {
  using Acc = float;
  __device__ __forceinline__ static Acc toAcc(__half x) { return __half2float(x); }
  __device__ __forceinline__ static __half fromAcc(Acc a) { return __float2half_rn(a); }
  __device__ __forceinline__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ __forceinline__ static Acc mul(Acc a, Acc b) { return a * b; }
  __device__ __forceinline__ static Acc div(Acc a, int n) { return a / static_cast<Acc>(n); }
};

template <>
struct Arith<__bfloat16> {
  using Acc = float;
  __device__ __forceinline__ static Acc toAcc(__bfloat16 x) { return __bfloat162float(x); }
  __device__ __forceinline__ static __bfloat16 fromAcc(Acc a) { return __float2bfloat16_rn(a); }
  __device__ __forceinline__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ __forceinline__ static Acc mul(Acc a, Acc b) { return a * b; }
  __device__ __forceinline__ static Acc div(Acc a, int n) { return a / static_cast<Acc>(n); }
};

template <>
struct Arith<double> {
  using Acc = double;
  __device__ __forceinline__ static Acc toAcc(double x) { return x; }
  __device__ __forceinline__ static double fromAcc(Acc a) { return a; }
  __device__ __forceinline__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ __forceinline__ static Acc mul(Acc a, Acc b) { return a * b; }
  __device__ __forceinline__ static Acc div(Acc a, int n) { return a / static_cast<Acc>(n); }
};

template <typename T>
struct Arith<T, std::enable_if_t<std::is_integral<T>::value>> {
  using Acc = T;
  using U = std::make_unsigned_t<T>;
  __device__ __forceinline__ static Acc toAcc(T x) { return x; }
  __device__ __forceinline__ static T fromAcc(Acc a) { return a; }
  __device__ __forceinline__ static Acc add(Acc a, Acc b) {
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
  __device__ __forceinline__ static Acc mul(Acc a, Acc b) {
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
  __device__ __forceinline__ static Acc div(Acc a, int n) { return static_cast<T>(a / static_cast<T>(n)); }
};

/// a combined with b under Kind, in the accumulation type.
template <typename T, ReduceKind Kind>
__device__ __forceinline__ typename Arith<T>::Acc combine(typename Arith<T>::Acc a, typename Arith<T>::Acc b) {
  using A = Arith<T>;
  switch (Kind) {
    case ReduceKind::Sum:
      return A::add(a, b);
    case ReduceKind::Prod:
      return A::mul(a, b);
    case ReduceKind::Max:
      return b > a ? b : a;
    case ReduceKind::Min:
      return b < a ? b : a;
  }
  return a;
}

/// x scaled by `scalar`, rounded once to T: PreMulSum's treatment of a rank's own input.
template <typename T>
__device__ __forceinline__ T preMultiply(T x, T scalar) {
  using A = Arith<T>;
  return A::fromAcc(A::mul(A::toAcc(scalar), A::toAcc(x)));
}

/// Combines the inputs of one element in a fixed order: begin(x0), add(xq) for the others, end().
/// Each rank passes its own input through prepare() before combining or sending it: with PreMulSum
/// that scales it by this rank's scalar, otherwise it returns it unchanged.
template <typename T, ReduceKind Kind>
struct Reducer {
  using A = Arith<T>;
  using Acc = typename A::Acc;
  T scalar{};
  bool preMultiplies;
  bool average;
  int nRanks;

  /// Reads the PreMulSum scalar (from device memory where spec.scalarPtr is set).
  __device__ __forceinline__ Reducer(const ReduceSpec& spec, int nRanks)
      : preMultiplies(spec.preMultiplies), average(spec.average), nRanks(nRanks) {
    static_assert(sizeof(T) <= sizeof(spec.scalarBits), "element larger than the scalar's bits");
    if (!preMultiplies) return;
    if (spec.scalarPtr != nullptr) {
      scalar = *static_cast<const T*>(spec.scalarPtr);
    } else {
      memcpy(&scalar, &spec.scalarBits, sizeof(T));
    }
  }

  __device__ __forceinline__ T prepare(T own) const { return preMultiplies ? preMultiply(own, scalar) : own; }
  __device__ __forceinline__ Acc begin(T x) const { return A::toAcc(x); }
  __device__ __forceinline__ Acc add(Acc a, T x) const { return combine<T, Kind>(a, A::toAcc(x)); }
  __device__ __forceinline__ T end(Acc a) const {
    if (Kind == ReduceKind::Sum && average) return A::fromAcc(A::div(a, nRanks));
    return A::fromAcc(a);
  }
};

// ---- packed words: 4, 8 or 16 bytes of elements ----

/// The register type of a packed word of Bytes bytes.
template <int Bytes>
using PackedWord = std::conditional_t<Bytes == 16, uint4, std::conditional_t<Bytes == 8, uint2, uint32_t>>;

/// A packed word of Bytes / sizeof(T) elements, seen as raw bits or as elements.
template <typename T, int Bytes>
union Vec {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "packed words are 4, 8 or 16 bytes");
  static constexpr int N = Bytes / static_cast<int>(sizeof(T));
  PackedWord<Bytes> raw;
  T e[N];
  __device__ __forceinline__ Vec() {}
  __device__ __forceinline__ explicit Vec(PackedWord<Bytes> w) : raw(w) {}
};

/// Per-element accumulators of one packed word, for reductions of many inputs with one rounding.
template <typename T, ReduceKind Kind, int Bytes>
struct VecAcc {
  static constexpr int N = Vec<T, Bytes>::N;
  typename Reducer<T, Kind>::Acc a[N];

  __device__ __forceinline__ void begin(const Reducer<T, Kind>& r, const Vec<T, Bytes>& v) {
#pragma unroll
    for (int i = 0; i < N; ++i) a[i] = r.begin(v.e[i]);
  }
  __device__ __forceinline__ void add(const Reducer<T, Kind>& r, const Vec<T, Bytes>& v) {
#pragma unroll
    for (int i = 0; i < N; ++i) a[i] = r.add(a[i], v.e[i]);
  }
  __device__ __forceinline__ Vec<T, Bytes> end(const Reducer<T, Kind>& r) const {
    Vec<T, Bytes> v;
#pragma unroll
    for (int i = 0; i < N; ++i) v.e[i] = r.end(a[i]);
    return v;
  }
};

/// Each element of a packed word passed through r.prepare (this rank's own data, before it is combined
/// or sent).
template <typename T, ReduceKind Kind, int Bytes>
__device__ __forceinline__ PackedWord<Bytes> prepareWord(const Reducer<T, Kind>& r, PackedWord<Bytes> w) {
  if (!r.preMultiplies) return w;
  Vec<T, Bytes> v(w);
#pragma unroll
  for (int i = 0; i < Vec<T, Bytes>::N; ++i) v.e[i] = r.prepare(v.e[i]);
  return v.raw;
}

/// Two packed words combined element by element under Kind, each element rounded once.
template <typename T, ReduceKind Kind, int Bytes>
__device__ __forceinline__ PackedWord<Bytes> combineWords(PackedWord<Bytes> a, PackedWord<Bytes> b) {
#if defined(MSCCLPP_DEVICE_CUDA)
  // fp16 and bf16 sums in the paired native add: one instruction per two elements where the float path
  // takes several. The bits are the float path's: the native add rounds the exact sum once, and rounding
  // it to float first changes nothing, since float's 24-bit significand has at least 2p + 2 bits for
  // p = 11 (fp16) and 8 (bf16) (double rounding is then innocuous) and float covers both types' ranges,
  // subnormals included; a NaN input or inf - inf gives a NaN either way.
  constexpr bool kNativePairs = Kind == ReduceKind::Sum && (std::is_same_v<T, __half> || std::is_same_v<T, __bfloat16>);
  if constexpr (kNativePairs) {
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __bfloat162>;
    union Pairs {
      PackedWord<Bytes> raw;
      Pair p[Bytes / 4];
      __device__ __forceinline__ Pairs() {}
    } x, y;
    x.raw = a;
    y.raw = b;
#pragma unroll
    for (int i = 0; i < Bytes / 4; ++i) x.p[i] = __hadd2(x.p[i], y.p[i]);
    return x.raw;
  }
#endif
  using A = Arith<T>;
  Vec<T, Bytes> x(a), y(b);
#pragma unroll
  for (int i = 0; i < Vec<T, Bytes>::N; ++i) x.e[i] = A::fromAcc(combine<T, Kind>(A::toAcc(x.e[i]), A::toAcc(y.e[i])));
  return x.raw;
}

// ---- byte copies ----

/// *p = v with the evict-first (streaming) hint: for data this kernel will not read again, so that it
/// does not push out of the cache lines that will be. HIP has no __stcs: its non-temporal store is
/// the same hint.
__device__ __forceinline__ void storeEvictFirst(uint4* p, uint4 v) {
#if defined(MSCCLPP_DEVICE_HIP)
  __builtin_nontemporal_store(v.x, &p->x);
  __builtin_nontemporal_store(v.y, &p->y);
  __builtin_nontemporal_store(v.z, &p->z);
  __builtin_nontemporal_store(v.w, &p->w);
#else
  __stcs(p, v);
#endif
}

/// The 8 bytes at base + off, of which only those below `len` are read (the rest are zero).
__device__ __forceinline__ uint2 load8(const char* base, uint64_t off, uint64_t len) {
  const char* p = base + off;
  if (off + 8 <= len && (reinterpret_cast<uintptr_t>(p) & 7) == 0) return *reinterpret_cast<const uint2*>(p);
  union {
    uint2 v;
    unsigned char b[8];
  } u;
  u.v = make_uint2(0, 0);
  const uint64_t n = len - off < 8 ? len - off : 8;
  for (uint64_t k = 0; k < n; ++k) u.b[k] = static_cast<unsigned char>(p[k]);
  return u.v;
}

/// Stores the bytes of `v` that fall below `len` at base + off.
__device__ __forceinline__ void store8(char* base, uint64_t off, uint64_t len, uint2 v) {
  char* p = base + off;
  if (off + 8 <= len && (reinterpret_cast<uintptr_t>(p) & 7) == 0) {
    *reinterpret_cast<uint2*>(p) = v;
    return;
  }
  union {
    uint2 v;
    unsigned char b[8];
  } u;
  u.v = v;
  const uint64_t n = len - off < 8 ? len - off : 8;
  for (uint64_t k = 0; k < n; ++k) p[k] = static_cast<char>(u.b[k]);
}

namespace detail {

/// copyBytes with dst and src equally misaligned modulo sizeof(W): bytes up to dst's first W boundary,
/// then whole Ws (four per thread per step, to keep several loads in flight), then the bytes left.
template <typename W>
__device__ __forceinline__ void copyAs(char* dst, const char* src, uint64_t bytes) {
  constexpr uint64_t kW = sizeof(W);
  const uint64_t mis = reinterpret_cast<uintptr_t>(dst) & (kW - 1);
  const uint64_t head = mis == 0 ? 0 : (kW - mis < bytes ? kW - mis : bytes);
  const uint64_t nVec = (bytes - head) / kW;
  const uint64_t tail = head + nVec * kW;
  for (uint64_t i = threadIdx.x; i < head; i += blockDim.x) dst[i] = src[i];
  const W* s = reinterpret_cast<const W*>(src + head);
  W* d = reinterpret_cast<W*>(dst + head);
  const uint64_t step = blockDim.x;
  uint64_t i = threadIdx.x;
  for (; i + 3 * step < nVec; i += 4 * step) {
    const W a = s[i], b = s[i + step], c = s[i + 2 * step], e = s[i + 3 * step];
    d[i] = a;
    d[i + step] = b;
    d[i + 2 * step] = c;
    d[i + 3 * step] = e;
  }
  for (; i < nVec; i += step) d[i] = s[i];
  for (uint64_t j = tail + threadIdx.x; j < bytes; j += blockDim.x) dst[j] = src[j];
}

}  // namespace detail

/// Block-cooperative copy of `bytes` from src to dst (every thread of the block calls it), for any
/// alignment and length; the ranges must not overlap unless dst == src (then nothing is copied). Moves
/// 16-byte vectors where dst and src are equally misaligned modulo 16, else 8-, 4-byte words or bytes,
/// the widest their common alignment allows.
__device__ __forceinline__ void copyBytes(char* dst, const char* src, uint64_t bytes) {
  if (bytes == 0 || dst == src) return;
  const uintptr_t apart = reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src);
  if ((apart & 15) == 0) {
    detail::copyAs<uint4>(dst, src, bytes);
  } else if ((apart & 7) == 0) {
    detail::copyAs<uint2>(dst, src, bytes);
  } else if ((apart & 3) == 0) {
    detail::copyAs<uint32_t>(dst, src, bytes);
  } else {
    for (uint64_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
  }
}

/// Block-cooperative copy of `elems` elements through r.prepare (this rank's own input on its way to
/// a peer): copyBytes where prepare changes nothing, else 16-byte words where both addresses are
/// 16-byte aligned and elements otherwise.
template <typename T, ReduceKind Kind>
__device__ __forceinline__ void copyPrepared(const Reducer<T, Kind>& r, T* dst, const T* src, uint64_t elems) {
  if (!r.preMultiplies) {
    copyBytes(reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src), elems * sizeof(T));
    return;
  }
  constexpr uint64_t kPerWord = 16 / sizeof(T);
  const bool aligned = ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0;
  const uint64_t nWords = aligned ? elems / kPerWord : 0;
  for (uint64_t i = threadIdx.x; i < nWords; i += blockDim.x) {
    reinterpret_cast<uint4*>(dst)[i] = prepareWord<T, Kind, 16>(r, reinterpret_cast<const uint4*>(src)[i]);
  }
  for (uint64_t i = nWords * kPerWord + threadIdx.x; i < elems; i += blockDim.x) dst[i] = r.prepare(src[i]);
}

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_DEVICE_OPS_HPP_
