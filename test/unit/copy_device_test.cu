// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// copy<Alignment, CopyRemainder>() against a byte-for-byte host model of its contract, over element
// sizes, equal misalignments of source and destination, awkward byte counts and thread counts.

#include <gtest/gtest.h>

#include <cstdint>
#include <mscclpp/copy_device.hpp>
#include <vector>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;

namespace {

constexpr uint64_t kBufferBytes = 8192;
constexpr unsigned char kSentinel = 0xee;

template <int Alignment, bool CopyRemainder>
__global__ void copyKernel(char* dst, char* src, uint64_t bytes) {
  const uint32_t threadId = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t numThreads = gridDim.x * blockDim.x;
  copy<Alignment, CopyRemainder>(dst, src, bytes, threadId, numThreads);
}

struct Launch {
  int blocks;
  int threads;
};

// What copy() must leave in dst: bytes [begin, end) of the destination range come from the source,
// everything else keeps the sentinel. `dstAddress` is the real address (its misalignment matters).
void expectedCopy(std::vector<unsigned char>& model, const std::vector<unsigned char>& src, uintptr_t dstAddress,
                  uint64_t dstOffset, uint64_t srcOffset, uint64_t bytes, uint64_t alignment, bool copyRemainder) {
  const uint64_t numInts = bytes / 4;
  uint64_t begin = 0;
  uint64_t end = numInts * 4;
  if (!copyRemainder) {
    const uint64_t misalignment = dstAddress % alignment;
    uint64_t headInts = misalignment == 0 ? 0 : (alignment - misalignment) / 4;
    if (headInts > numInts) headInts = numInts;
    const uint64_t numElems = (numInts - headInts) * 4 / alignment;
    begin = headInts * 4;
    end = begin + numElems * alignment;
  }
  for (uint64_t i = begin; i < end; ++i) model[dstOffset + i] = src[srcOffset + i];
}

template <int Alignment, bool CopyRemainder>
void checkCopies() {
  DeviceBuffer<char> src(kBufferBytes);
  DeviceBuffer<char> dst(kBufferBytes);
  ASSERT_TRUE(src.ok() && dst.ok());
  std::vector<unsigned char> pattern(kBufferBytes);
  for (uint64_t i = 0; i < kBufferBytes; ++i) pattern[i] = static_cast<unsigned char>((i * 167 + 13) & 0xff);
  MSCCLPP_TEST_CUDA(cudaMemcpy(src.get(), pattern.data(), kBufferBytes, cudaMemcpyHostToDevice));

  const std::vector<uint64_t> misalignments = {0, 4, 8, 12};
  const std::vector<uint64_t> sizes = {0, 4, 7, 8, 12, 16, 20, 28, 36, 60, 64, 100, 1020, 1023, 1024, 4092, 4096};
  const std::vector<Launch> launches = {{1, 1}, {1, 3}, {1, 32}, {1, 33}, {1, 256}, {4, 64}, {7, 96}};
  std::vector<unsigned char> got(kBufferBytes);
  int cases = 0;
  for (uint64_t mis : misalignments) {
    // Equal misalignment on both sides, at different positions in the two buffers.
    const uint64_t dstOffset = 64 + mis;
    const uint64_t srcOffset = 256 + mis;
    for (uint64_t bytes : sizes) {
      for (const Launch& launch : launches) {
        MSCCLPP_TEST_CUDA(cudaMemset(dst.get(), kSentinel, kBufferBytes));
        copyKernel<Alignment, CopyRemainder>
            <<<launch.blocks, launch.threads>>>(dst.get() + dstOffset, src.get() + srcOffset, bytes);
        MSCCLPP_TEST_CUDA(cudaGetLastError());
        MSCCLPP_TEST_CUDA(cudaMemcpy(got.data(), dst.get(), kBufferBytes, cudaMemcpyDeviceToHost));
        std::vector<unsigned char> model(kBufferBytes, kSentinel);
        expectedCopy(model, pattern, reinterpret_cast<uintptr_t>(dst.get() + dstOffset), dstOffset, srcOffset, bytes,
                     Alignment, CopyRemainder);
        uint64_t firstDiff = 0;
        while (firstDiff < kBufferBytes && got[firstDiff] == model[firstDiff]) ++firstDiff;
        ASSERT_EQ(firstDiff, kBufferBytes)
            << "Alignment " << Alignment << (CopyRemainder ? " with" : " without") << " remainder, misalignment " << mis
            << ", " << bytes << " bytes, " << launch.blocks << "x" << launch.threads << " threads: byte " << firstDiff
            << " of the destination buffer (range starts at " << dstOffset << ") is "
            << static_cast<int>(got[firstDiff]) << ", expected " << static_cast<int>(model[firstDiff]);
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

}  // namespace

TEST(DeviceCopyTest, Align4CopiesEveryWholeInt) {
  MSCCLPP_REQUIRE_GPU();
  checkCopies<4, true>();
}

TEST(DeviceCopyTest, Align4WithoutRemainderStillCopiesEverything) {
  MSCCLPP_REQUIRE_GPU();
  checkCopies<4, false>();
}

TEST(DeviceCopyTest, Align8WithRemainderCopiesHeadMiddleAndTail) {
  MSCCLPP_REQUIRE_GPU();
  checkCopies<8, true>();
}

TEST(DeviceCopyTest, Align8WithoutRemainderCopiesOnlyWholeAlignedElements) {
  MSCCLPP_REQUIRE_GPU();
  checkCopies<8, false>();
}

TEST(DeviceCopyTest, Align16WithRemainderCopiesHeadMiddleAndTail) {
  MSCCLPP_REQUIRE_GPU();
  checkCopies<16, true>();
}

TEST(DeviceCopyTest, Align16WithoutRemainderCopiesOnlyWholeAlignedElements) {
  MSCCLPP_REQUIRE_GPU();
  checkCopies<16, false>();
}
