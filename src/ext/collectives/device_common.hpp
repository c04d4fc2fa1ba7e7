// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device helpers shared by the collective kernels: the per-block barrier between ranks, byte-exact
// loads and stores for buffers of any alignment and length, and the reduction of each element type.
// Included by the .cu files of this folder only.

#ifndef MSCCLPP_EXT_COLLECTIVES_DEVICE_COMMON_HPP_
#define MSCCLPP_EXT_COLLECTIVES_DEVICE_COMMON_HPP_

#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/packet_device.hpp>
#include <mscclpp/poll_device.hpp>
#include <type_traits>

#include "common/checks.hpp"
#include "ext/collectives/kernels.hpp"

namespace mscclpp {
namespace collectives {

/// A wait for a peer gives up (and traps, see poll_device.hpp) only after minutes: peers may start
/// their kernel much later than this rank, e.g. behind host work of their own.
constexpr int64_t kSpinLimit = int64_t{1} << 34;

/// The barrier counts of one block with every rank, kept in shared memory for the kernel's duration.
struct BlockCounts {
  uint64_t count[kMaxRanks];
};

__device__ __forceinline__ void loadCounts(const DeviceState& s, uint32_t block, BlockCounts& c) {
  for (int p = threadIdx.x; p < s.nRanks; p += blockDim.x) c.count[p] = s.barrierCounts[block * s.nRanks + p];
  __syncthreads();
}

__device__ __forceinline__ void storeCounts(const DeviceState& s, uint32_t block, const BlockCounts& c) {
  __syncthreads();
  for (int p = threadIdx.x; p < s.nRanks; p += blockDim.x) s.barrierCounts[block * s.nRanks + p] = c.count[p];
}

/// Block `block` of this rank meets block `block` of each rank peerOf(0..nPeers-1): every write the
/// block made before is visible to those peers' blocks after, and theirs to this block. One thread
/// per peer publishes the new count into the peer's flag with a system-scope release and waits for
/// the peer's with an acquire; __syncthreads on both sides extends that to the whole block.
template <typename PeerOf>
__device__ __forceinline__ void barrier(const DeviceState& s, uint32_t block, BlockCounts& c, int nPeers,
                                        PeerOf peerOf) {
  __syncthreads();
  for (int t = threadIdx.x; t < nPeers; t += blockDim.x) {
    const int p = peerOf(t);
    const uint64_t value = c.count[p] + 1;
    c.count[p] = value;
    uint64_t* remote = reinterpret_cast<uint64_t*>(s.scratch[p] + s.layout.flag(block, s.rank));
    const uint64_t* mine = reinterpret_cast<const uint64_t*>(s.scratch[s.rank] + s.layout.flag(block, p));
    detail::atomicFence<scopeSystem>(memoryOrderRelease);
    atomicStore<uint64_t, scopeSystem>(remote, value, memoryOrderRelaxed);
    POLL_MAYBE_JAILBREAK((atomicLoad<uint64_t, scopeSystem>(mine, memoryOrderAcquire) < value), kSpinLimit);
  }
  __syncthreads();
}

/// Peers other than this rank, in rank order: t -> the t-th of them.
struct AllPeers {
  int rank;
  __device__ __forceinline__ int operator()(int t) const { return t < rank ? t : t + 1; }
};

struct OnePeer {
  int peer;
  __device__ __forceinline__ int operator()(int) const { return peer; }
};

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

/// Block-cooperative copy of `bytes` (any alignment). Moves 16-byte vectors when dst and src are
/// equally misaligned modulo 16, bytes otherwise.
__device__ __forceinline__ void copyBytes(char* dst, const char* src, uint64_t bytes) {
  if (bytes == 0 || dst == src) return;
  const uint64_t mis = reinterpret_cast<uintptr_t>(dst) & 15;
  if (mis == (reinterpret_cast<uintptr_t>(src) & 15)) {
    uint64_t head = mis == 0 ? 0 : 16 - mis;
    if (head > bytes) head = bytes;
    const uint64_t nVec = (bytes - head) / 16;
    const uint64_t tail = head + nVec * 16;
    for (uint64_t i = threadIdx.x; i < head; i += blockDim.x) dst[i] = src[i];
    const uint4* s4 = reinterpret_cast<const uint4*>(src + head);
    uint4* d4 = reinterpret_cast<uint4*>(dst + head);
    uint64_t i = threadIdx.x;
    for (; i + 3 * blockDim.x < nVec; i += 4 * blockDim.x) {
      const uint4 a = s4[i], b = s4[i + blockDim.x], c = s4[i + 2 * blockDim.x], d = s4[i + 3 * blockDim.x];
      d4[i] = a;
      d4[i + blockDim.x] = b;
      d4[i + 2 * blockDim.x] = c;
      d4[i + 3 * blockDim.x] = d;
    }
    for (; i < nVec; i += blockDim.x) d4[i] = s4[i];
    for (uint64_t j = tail + threadIdx.x; j < bytes; j += blockDim.x) dst[j] = src[j];
  } else {
    for (uint64_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
  }
}

// ---- element types and their reduction ----

template <DataType D>
struct TypeOf;
template <>
struct TypeOf<DataType::Int8> {
  using type = int8_t;
};
template <>
struct TypeOf<DataType::Uint8> {
  using type = uint8_t;
};
template <>
struct TypeOf<DataType::Int32> {
  using type = int32_t;
};
template <>
struct TypeOf<DataType::Uint32> {
  using type = uint32_t;
};
template <>
struct TypeOf<DataType::Int64> {
  using type = int64_t;
};
template <>
struct TypeOf<DataType::Uint64> {
  using type = uint64_t;
};
template <>
struct TypeOf<DataType::Float16> {
  using type = __half;
};
template <>
struct TypeOf<DataType::Float32> {
  using type = float;
};
template <>
struct TypeOf<DataType::Float64> {
  using type = double;
};
template <>
struct TypeOf<DataType::Bfloat16> {
  using type = __bfloat16;
};
#if defined(__FP8_TYPES_EXIST__)
template <>
struct TypeOf<DataType::Fp8E4M3> {
  using type = __fp8_e4m3;
};
template <>
struct TypeOf<DataType::Fp8E5M2> {
  using type = __fp8_e5m2;
};
#endif

/// How an element type is combined: integers in their own width with wrap-around (as NCCL does),
/// floating types in float (double for double) with one rounding back at the end, so that the
/// result of n inputs is rounded once instead of n-1 times.
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

/// Combines the inputs of one element in rank order: begin(x0), then add(xq) for q = 1..n-1, then
/// end(). Kind is a ReduceSpec::Kind.
template <typename T, ReduceSpec::Kind Kind>
struct Reducer {
  using A = Arith<T>;
  using Acc = typename A::Acc;
  Acc scalar;
  bool average;
  int nRanks;

  __device__ __forceinline__ Reducer(const ReduceSpec& spec, int n) : average(spec.average), nRanks(n) {
    T s;
    if (spec.scalarPtr != nullptr) {
      s = *static_cast<const T*>(spec.scalarPtr);
    } else {
      static_assert(sizeof(T) <= sizeof(uint64_t), "element larger than the scalar's bits");
      memcpy(&s, &spec.scalarBits, sizeof(T));
    }
    scalar = A::toAcc(s);
  }

  __device__ __forceinline__ Acc begin(T x) const {
    if (Kind == ReduceSpec::Kind::Sum) return A::mul(scalar, A::toAcc(x));
    return A::toAcc(x);
  }
  __device__ __forceinline__ Acc add(Acc a, T x) const {
    const Acc v = A::toAcc(x);
    switch (Kind) {
      case ReduceSpec::Kind::Sum:
        return A::add(a, A::mul(scalar, v));
      case ReduceSpec::Kind::Prod:
        return A::mul(a, v);
      case ReduceSpec::Kind::Max:
        return v > a ? v : a;
      case ReduceSpec::Kind::Min:
        return v < a ? v : a;
    }
    return a;
  }
  __device__ __forceinline__ T end(Acc a) const {
    if (Kind == ReduceSpec::Kind::Sum && average) return A::fromAcc(A::div(a, nRanks));
    return A::fromAcc(a);
  }
};

/// A vector of Bytes / sizeof(T) elements reduced element by element.
template <typename T, int Bytes>
union Vec {
  static constexpr int N = Bytes / static_cast<int>(sizeof(T));
  typename std::conditional<Bytes == 16, uint4, uint2>::type raw;
  T e[N];
  __device__ __forceinline__ Vec() {}
};

template <typename T, ReduceSpec::Kind Kind, int Bytes>
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

}  // namespace collectives
}  // namespace mscclpp

/// Calls F<T, Kind>(args...) for the runtime (type, kind): one instantiation per element type and
/// reduction kind. F is a function template name.
#define MSCCLPP_COLL_DISPATCH_KIND(F, T, kind, ...)                        \
  do {                                                                     \
    switch (kind) {                                                        \
      case ::mscclpp::collectives::ReduceSpec::Kind::Sum:                  \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Sum>(__VA_ARGS__);  \
        break;                                                             \
      case ::mscclpp::collectives::ReduceSpec::Kind::Prod:                 \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Prod>(__VA_ARGS__); \
        break;                                                             \
      case ::mscclpp::collectives::ReduceSpec::Kind::Max:                  \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Max>(__VA_ARGS__);  \
        break;                                                             \
      case ::mscclpp::collectives::ReduceSpec::Kind::Min:                  \
        F<T, ::mscclpp::collectives::ReduceSpec::Kind::Min>(__VA_ARGS__);  \
        break;                                                             \
    }                                                                      \
  } while (0)

#define MSCCLPP_COLL_TYPE_CASE(F, D, kind, ...)                                                                       \
  case ::mscclpp::collectives::DataType::D:                                                                           \
    MSCCLPP_COLL_DISPATCH_KIND(F, typename ::mscclpp::collectives::TypeOf<::mscclpp::collectives::DataType::D>::type, \
                               kind, __VA_ARGS__);                                                                    \
    break;

#define MSCCLPP_COLL_DISPATCH(F, type, kind, ...)            \
  do {                                                       \
    switch (type) {                                          \
      MSCCLPP_COLL_TYPE_CASE(F, Int8, kind, __VA_ARGS__)     \
      MSCCLPP_COLL_TYPE_CASE(F, Uint8, kind, __VA_ARGS__)    \
      MSCCLPP_COLL_TYPE_CASE(F, Int32, kind, __VA_ARGS__)    \
      MSCCLPP_COLL_TYPE_CASE(F, Uint32, kind, __VA_ARGS__)   \
      MSCCLPP_COLL_TYPE_CASE(F, Int64, kind, __VA_ARGS__)    \
      MSCCLPP_COLL_TYPE_CASE(F, Uint64, kind, __VA_ARGS__)   \
      MSCCLPP_COLL_TYPE_CASE(F, Float16, kind, __VA_ARGS__)  \
      MSCCLPP_COLL_TYPE_CASE(F, Float32, kind, __VA_ARGS__)  \
      MSCCLPP_COLL_TYPE_CASE(F, Float64, kind, __VA_ARGS__)  \
      MSCCLPP_COLL_TYPE_CASE(F, Bfloat16, kind, __VA_ARGS__) \
      MSCCLPP_COLL_FP8_CASES(F, kind, __VA_ARGS__)           \
    }                                                        \
  } while (0)

#if defined(__FP8_TYPES_EXIST__)
#define MSCCLPP_COLL_FP8_CASES(F, kind, ...)            \
  MSCCLPP_COLL_TYPE_CASE(F, Fp8E4M3, kind, __VA_ARGS__) \
  MSCCLPP_COLL_TYPE_CASE(F, Fp8E5M2, kind, __VA_ARGS__)
#else
// A toolkit without FP8 types (HIP before ROCm 6) has no FP8 kernels: such a reduction is refused on the
// host, before anything is launched.
#define MSCCLPP_COLL_FP8_CASES(F, kind, ...)      \
  case ::mscclpp::collectives::DataType::Fp8E4M3: \
  case ::mscclpp::collectives::DataType::Fp8E5M2: \
    MSCCLPP_THROW(InvalidUsage, "FP8 reductions are not available: the GPU toolkit has no FP8 types");
#endif

#endif  // MSCCLPP_EXT_COLLECTIVES_DEVICE_COMMON_HPP_
