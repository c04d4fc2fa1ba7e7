// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Spin limits and device assertions fire: the kernel prints where it gave up and traps, and the host
// sees a launch failure. A trap ruins the CUDA context of its process, so each such kernel runs in a
// child process (a gtest death test in "threadsafe" style: fork, then re-execute this binary).

// Device assertions are on in this translation unit regardless of the build type, so that the
// ProxyTrigger range checks can be shown to fire.
#define MSCCLPP_DEVICE_ASSERTS
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/fifo_device.hpp>
#include <mscclpp/poll_device.hpp>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;

namespace {

__global__ void waitForeverKernel(const uint32_t* neverSet, int64_t maxSpin) {
  POLL_MAYBE_JAILBREAK((atomicLoad<uint32_t, scopeDevice>(neverSet, memoryOrderRelaxed) == 0), maxSpin);
}

__global__ void orWaitKernel(const uint32_t* first, const uint32_t* second, int64_t maxSpin) {
  OR_POLL_MAYBE_JAILBREAK((atomicLoad<uint32_t, scopeDevice>(first, memoryOrderRelaxed) == 0),
                          (atomicLoad<uint32_t, scopeDevice>(second, memoryOrderRelaxed) == 0), maxSpin);
}

// Block 1 sets the flag after a long busy delay; block 0 waits without limit and counts its spins.
__global__ void unlimitedWaitKernel(uint32_t* flag, uint64_t delayCycles, uint64_t* spins) {
  if (blockIdx.x == 1) {
    const long long start = clock64();
    while (static_cast<uint64_t>(clock64() - start) < delayCycles) {
    }
    atomicStore<uint32_t, scopeDevice>(flag, 1u, memoryOrderRelease);
    return;
  }
  uint64_t count = 0;
  POLL_MAYBE_JAILBREAK((++count, atomicLoad<uint32_t, scopeDevice>(flag, memoryOrderAcquire) == 0), -1);
  *spins = count;
}

__global__ void zeroSizeTriggerKernel(uint64_t* out) {
  const ProxyTrigger trigger(TriggerData, 1, 0, 2, 0, 0, 3);
  out[0] = trigger.fst;
}

bool isTrapError(cudaError_t err) { return err == cudaErrorLaunchFailure || err == cudaErrorIllegalInstruction; }

struct KernelOutcome {
  cudaError_t launched;
  cudaError_t finished;
};

// Runs in the child: `run` launches the kernel and waits for it. Reports on stderr how the kernel
// ended and exits 0 exactly when it ended in the launch failure a trap causes. Device printf goes to
// stdout, which is redirected to stderr so that the death test sees both.
template <typename Run>
[[noreturn]] void runTrappingKernel(Run run) {
  dup2(STDERR_FILENO, STDOUT_FILENO);
  const KernelOutcome outcome = run();
  fflush(stdout);
  if (outcome.launched != cudaSuccess) {
    fprintf(stderr, "launch did not start: %s\n", cudaGetErrorName(outcome.launched));
    _exit(2);
  }
  fprintf(stderr, "kernel ended with %s\n", cudaGetErrorName(outcome.finished));
  fflush(stderr);
  _exit(isTrapError(outcome.finished) ? 0 : 1);
}

class DevicePollTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

}  // namespace

TEST_F(DevicePollTest, SpinLimitTrapsAndPrintsTheWaitItGaveUpOn) {
  MSCCLPP_REQUIRE_GPU();
  EXPECT_EXIT(runTrappingKernel([] {
                DeviceBuffer<uint32_t> flag(1);
                waitForeverKernel<<<1, 1>>>(flag.get(), 1000);
                return KernelOutcome{cudaGetLastError(), cudaDeviceSynchronize()};
              }),
              ::testing::ExitedWithCode(0),
              "mscclpp: spin limit expired at .*poll_device_test\\.cu:[0-9]+: still waiting for "
              "`.*neverSet.*== 0.*` after 1000 spins \\(pass maxSpin=-1 to wait without limit\\) "
              "\\[block \\(0,0,0\\) thread \\(0,0,0\\)\\].*kernel ended with cudaError");
}

TEST_F(DevicePollTest, ZeroLimitTrapsOnTheFirstTrueEvaluation) {
  MSCCLPP_REQUIRE_GPU();
  EXPECT_EXIT(runTrappingKernel([] {
                DeviceBuffer<uint32_t> flag(1);
                waitForeverKernel<<<1, 1>>>(flag.get(), 0);
                return KernelOutcome{cudaGetLastError(), cudaDeviceSynchronize()};
              }),
              ::testing::ExitedWithCode(0), "spin limit expired .* after 0 spins");
}

TEST_F(DevicePollTest, OrPollTrapsOnlyWhileBothConditionsHold) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<uint32_t> zero(1);
  DeviceBuffer<uint32_t> one(1);
  ASSERT_TRUE(zero.ok() && one.ok());
  MSCCLPP_TEST_CUDA(cudaMemset(one.get(), 1, sizeof(uint32_t)));
  // Either condition false ends the wait at once, even with a zero limit.
  orWaitKernel<<<1, 1>>>(one.get(), zero.get(), 0);
  orWaitKernel<<<1, 1>>>(zero.get(), one.get(), 0);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EXIT(runTrappingKernel([] {
                DeviceBuffer<uint32_t> first(1);
                DeviceBuffer<uint32_t> second(1);
                orWaitKernel<<<1, 1>>>(first.get(), second.get(), 500);
                return KernelOutcome{cudaGetLastError(), cudaDeviceSynchronize()};
              }),
              ::testing::ExitedWithCode(0), "spin limit expired .*first.*&&.*second.* after 500 spins");
}

TEST_F(DevicePollTest, NegativeLimitWaitsPastAnyCount) {
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<uint32_t> flag(1);
  DeviceBuffer<uint64_t> spins(1);
  ASSERT_TRUE(flag.ok() && spins.ok());
  uint32_t* flagPtr = flag.get();
  uint64_t delay = 200000000;  // about a tenth of a second at GPU clock rates
  uint64_t* spinsPtr = spins.get();
  void* args[] = {&flagPtr, &delay, &spinsPtr};
  MSCCLPP_TEST_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(unlimitedWaitKernel), dim3(2), dim3(1),
                                                args, 0, nullptr));
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_GT(spins.toHost()[0], 10000u) << "the wait outlasted any small limit and did not trap";
}

TEST_F(DevicePollTest, DeviceAssertionTrapsWithItsMessage) {
  MSCCLPP_REQUIRE_GPU();
  EXPECT_EXIT(runTrappingKernel([] {
                DeviceBuffer<uint64_t> out(1);
                zeroSizeTriggerKernel<<<1, 1>>>(out.get());
                return KernelOutcome{cudaGetLastError(), cudaDeviceSynchronize()};
              }),
              ::testing::ExitedWithCode(0),
              "mscclpp: device assertion failed at .*fifo_device_impl\\.hpp:[0-9]+: `bytes != 0`: size must not be "
              "0.*kernel ended with cudaError");
}
