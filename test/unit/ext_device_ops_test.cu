// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The extensions' shared device code (src/ext/common/device_ops.hpp) on the GPU: copyBytes for every
// pair of misalignments against a byte model, sums of fp16 that round once, PreMulSum's scaling
// rounded to the element type, and packed-word reductions element by element (the native paired
// fp16/bf16 sums against the float path for every pair).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "device_test_util.hpp"
#include "ext/common/device_ops.hpp"

using mscclpp::devtest::DeviceBuffer;
using mscclpp::ext::ReduceKind;
using mscclpp::ext::ReduceSpec;

namespace {

__global__ void copyBytesKernel(char* dst, const char* src, uint64_t bytes) {
  mscclpp::ext::copyBytes(dst, src, bytes);
}

// out = the Kind-reduction of in[0..n-1] through Reducer (begin, add..., end), one element.
template <typename T, ReduceKind Kind>
__global__ void reduceKernel(const T* in, int n, ReduceSpec spec, T* out) {
  const mscclpp::ext::Reducer<T, Kind> r(spec, n);
  typename mscclpp::ext::Reducer<T, Kind>::Acc acc = r.begin(in[0]);
  for (int q = 1; q < n; ++q) acc = r.add(acc, in[q]);
  *out = r.end(acc);
}

// out[i] = prepareWord over 16-byte word i of in (PreMulSum's scaling of this rank's own input).
template <typename T>
__global__ void prepareKernel(const uint4* in, uint64_t nWords, ReduceSpec spec, uint4* out) {
  const mscclpp::ext::Reducer<T, ReduceKind::Sum> r(spec, 1);
  for (uint64_t i = threadIdx.x; i < nWords; i += blockDim.x)
    out[i] = mscclpp::ext::prepareWord<T, ReduceKind::Sum, 16>(r, in[i]);
}

template <typename T, ReduceKind Kind>
__global__ void combineWordsKernel(uint4 a, uint4 b, uint4* out) {
  *out = mscclpp::ext::combineWords<T, Kind, 16>(a, b);
}

/// Counts the pairs (x, y) of 16-bit elements of T (x = blockIdx.x, y every value) whose sum through
/// combineWords (the native paired add for fp16/bf16) differs in bits from the float path (Reducer:
/// float accumulation rounded once); two NaNs count as equal.
template <typename T>
__global__ void pairSumMismatchesKernel(unsigned long long* mismatches) {
  const mscclpp::ext::Reducer<T, ReduceKind::Sum> r(ReduceSpec{}, 2);
  const uint32_t x = blockIdx.x;
  unsigned long long bad = 0;
  for (uint32_t y = threadIdx.x; y < 65536; y += blockDim.x) {
    // Lane 0 adds x + y, lane 1 y + x.
    const uint32_t sum = mscclpp::ext::combineWords<T, ReduceKind::Sum, 4>(x | (y << 16), y | (x << 16));
    for (int lane = 0; lane < 2; ++lane) {
      const uint16_t a = static_cast<uint16_t>(lane == 0 ? x : y), b = static_cast<uint16_t>(lane == 0 ? y : x);
      T ta, tb;
      memcpy(&ta, &a, 2);
      memcpy(&tb, &b, 2);
      const T want = r.end(r.add(r.begin(ta), tb));
      T got;
      const uint16_t gotBits = static_cast<uint16_t>(sum >> (16 * lane));
      memcpy(&got, &gotBits, 2);
      uint16_t wantBits;
      memcpy(&wantBits, &want, 2);
      const bool bothNan = isnan(static_cast<float>(got)) && isnan(static_cast<float>(want));
      if (gotBits != wantBits && !bothNan) ++bad;
    }
  }
  if (bad != 0) atomicAdd(mismatches, bad);
}

template <typename T>
unsigned long long pairSumMismatches() {
  DeviceBuffer<unsigned long long> count(1);
  if (!count.fromHost({0ull})) return ~0ull;
  pairSumMismatchesKernel<T><<<65536, 256>>>(count.get());
  if (cudaDeviceSynchronize() != cudaSuccess) return ~0ull;
  return count.toHost()[0];
}

template <typename T>
ReduceSpec preMulSumSpec(T scalar) {
  ReduceSpec spec;
  spec.preMultiplies = true;
  std::memcpy(&spec.scalarBits, &scalar, sizeof(T));
  return spec;
}

}  // namespace

TEST(ExtDeviceOps, CopyBytesCopiesExactlyTheRangeForEveryMisalignment) {
  MSCCLPP_REQUIRE_GPU();
  constexpr uint64_t kBytes = 8192;
  constexpr unsigned char kSentinel = 0xee;
  DeviceBuffer<char> src(kBytes), dst(kBytes);
  ASSERT_TRUE(src.ok() && dst.ok());
  std::vector<char> pattern(kBytes);
  for (uint64_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<char>((i * 167 + 13) & 0xff);
  ASSERT_TRUE(src.fromHost(pattern));
  for (uint64_t dstOff = 0; dstOff < 16; ++dstOff) {
    for (uint64_t srcOff = 0; srcOff < 16; ++srcOff) {
      for (uint64_t bytes : {0ull, 1ull, 3ull, 17ull, 255ull, 4099ull}) {
        MSCCLPP_TEST_CUDA(cudaMemset(dst.get(), kSentinel, kBytes));
        copyBytesKernel<<<1, 128>>>(dst.get() + dstOff, src.get() + srcOff, bytes);
        MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
        std::vector<char> want(kBytes, static_cast<char>(kSentinel));
        std::memcpy(want.data() + dstOff, pattern.data() + srcOff, bytes);
        ASSERT_EQ(dst.toHost(), want) << "dst +" << dstOff << ", src +" << srcOff << ", " << bytes << " bytes";
      }
    }
  }
}

TEST(ExtDeviceOps, HalfSumsAccumulateInFloatAndRoundOnce) {
  MSCCLPP_REQUIRE_GPU();
  // Halves near 2048 are 2 apart: adding 1 twice in half precision stays at 2048, in float it is 2050.
  DeviceBuffer<__half> in(3), out(1);
  ASSERT_TRUE(in.fromHost({__float2half(2048.f), __float2half(1.f), __float2half(1.f)}));
  reduceKernel<__half, ReduceKind::Sum><<<1, 1>>>(in.get(), 3, ReduceSpec{}, out.get());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(__half2float(out.toHost()[0]), 2050.f);
}

TEST(ExtDeviceOps, AvgDividesTheSumByTheRankCount) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<int32_t> in(3), out(1);
  ASSERT_TRUE(in.fromHost({7, 8, -1}));
  ReduceSpec avg;
  avg.average = true;
  reduceKernel<int32_t, ReduceKind::Sum><<<1, 1>>>(in.get(), 3, avg, out.get());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.toHost()[0], 14 / 3);
}

TEST(ExtDeviceOps, PreMulSumScalesEachElementAndRoundsToTheType) {
  MSCCLPP_REQUIRE_GPU();
  // bf16 has 8 significant bits: 3 * 171 = 513 needs 10 and rounds to 512; 3 * 1 = 3 is exact.
  std::vector<__bfloat16> values(8);
  for (size_t i = 0; i < values.size(); ++i) values[i] = __float2bfloat16(i % 2 == 0 ? 171.f : 1.f);
  DeviceBuffer<__bfloat16> in(8), out(8);
  ASSERT_TRUE(in.fromHost(values));
  prepareKernel<__bfloat16><<<1, 32>>>(reinterpret_cast<const uint4*>(in.get()), 1,
                                       preMulSumSpec(__float2bfloat16(3.f)), reinterpret_cast<uint4*>(out.get()));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<__bfloat16> got = out.toHost();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(__bfloat162float(got[i]), i % 2 == 0 ? 512.f : 3.f) << i;
  }
}

TEST(ExtDeviceOps, PreMulSumOfIntegersWrapsInTheirWidth) {
  MSCCLPP_REQUIRE_GPU();
  std::vector<int8_t> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int8_t>(static_cast<int>(i) * 9 - 60);
  DeviceBuffer<int8_t> in(16), out(16);
  ASSERT_TRUE(in.fromHost(values));
  prepareKernel<int8_t><<<1, 32>>>(reinterpret_cast<const uint4*>(in.get()), 1, preMulSumSpec<int8_t>(5),
                                   reinterpret_cast<uint4*>(out.get()));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<int8_t> got = out.toHost();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int8_t>(values[i] * 5)) << i;
}

TEST(ExtDeviceOps, WithoutPreMulSumPrepareLeavesTheInput) {
  MSCCLPP_REQUIRE_GPU();
  const std::vector<float> values = {1.5f, -2.f, 3.25f, 1e30f};
  DeviceBuffer<float> in(4), out(4);
  ASSERT_TRUE(in.fromHost(values));
  prepareKernel<float>
      <<<1, 32>>>(reinterpret_cast<const uint4*>(in.get()), 1, ReduceSpec{}, reinterpret_cast<uint4*>(out.get()));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.toHost(), values);
}

TEST(ExtDeviceOps, CombineWordsReducesElementByElement) {
  MSCCLPP_REQUIRE_GPU();
  const int32_t a[4] = {1, -5, 7, 100}, b[4] = {2, 3, -7, -100};
  uint4 wa, wb;
  std::memcpy(&wa, a, 16);
  std::memcpy(&wb, b, 16);
  DeviceBuffer<uint4> out(1);
  auto run = [&](auto kernel) {
    kernel<<<1, 1>>>(wa, wb, out.get());
    std::vector<int32_t> got(4);
    if (cudaDeviceSynchronize() == cudaSuccess) std::memcpy(got.data(), &out.toHost()[0], 16);
    return got;
  };
  EXPECT_EQ(run(combineWordsKernel<int32_t, ReduceKind::Sum>), (std::vector<int32_t>{3, -2, 0, 0}));
  EXPECT_EQ(run(combineWordsKernel<int32_t, ReduceKind::Prod>), (std::vector<int32_t>{2, -15, -49, -10000}));
  EXPECT_EQ(run(combineWordsKernel<int32_t, ReduceKind::Max>), (std::vector<int32_t>{2, 3, 7, 100}));
  EXPECT_EQ(run(combineWordsKernel<int32_t, ReduceKind::Min>), (std::vector<int32_t>{1, -5, -7, -100}));
}

TEST(ExtDeviceOps, NativePairedHalfAndBfloatSumsMatchTheFloatPathForEveryPair) {
  MSCCLPP_REQUIRE_GPU();
  // combineWords adds fp16/bf16 with the paired native instruction; the reductions that accumulate in
  // float must give the same bits, for all 2^32 ordered pairs of each type.
  EXPECT_EQ(pairSumMismatches<__half>(), 0ull);
  EXPECT_EQ(pairSumMismatches<__bfloat16>(), 0ull);
}
