// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// In a release build the API's waits called without a limit spin until their condition holds
// (poll_device.hpp): a peer that is merely late must not trap the kernel. The wait here is
// LL8Packet::read(flag), whose debug-build default is 1e6 spins.

#include <gtest/gtest.h>

#include <cstdint>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/packet_device.hpp>

#include "device_test_util.hpp"

using namespace mscclpp;
using mscclpp::devtest::DeviceBuffer;

namespace {

constexpr int64_t kOldDefaultSpins = 1000000;
constexpr uint32_t kFlag = 7;
constexpr uint32_t kPayload = 0x5eed;

// times[0]: cycles block 2 took for kOldDefaultSpins reads of a packet that never arrives (the time the
// old default limit stood for); times[1]: cycles block 0 waited in read(); out[0]: what it read.
__global__ void lateWriterKernel(LL8Packet* packet, const LL8Packet* neverWritten, uint64_t* calibration,
                                 uint64_t* times, uint32_t* out) {
  if (blockIdx.x == 2) {
    uint32_t data = 0;
    int64_t spins = 0;
    const long long start = clock64();
    while (spins < kOldDefaultSpins && !neverWritten->readOnce(kFlag, data)) ++spins;
    const uint64_t cycles = static_cast<uint64_t>(clock64() - start);
    times[0] = cycles;
    atomicStore<uint64_t, scopeDevice>(calibration, cycles, memoryOrderRelease);
  } else if (blockIdx.x == 1) {
    // Write three times as late as the old limit would have let block 0 wait.
    uint64_t cycles = 0;
    while ((cycles = atomicLoad<uint64_t, scopeDevice>(calibration, memoryOrderAcquire)) == 0) {
    }
    const long long start = clock64();
    while (static_cast<uint64_t>(clock64() - start) < 3 * cycles) {
    }
    packet->write(kPayload, kFlag);
  } else {
    const long long start = clock64();
    out[0] = packet->read(kFlag);
    times[1] = static_cast<uint64_t>(clock64() - start);
  }
}

}  // namespace

TEST(SpinLimitDefaultTest, ReleaseWaitWithoutALimitOutlivesTheOldDefault) {
#if defined(DEBUG_BUILD) || defined(MSCCLPP_DEVICE_ASSERTS)
  GTEST_SKIP() << "debug builds keep the default limits (poll_device.hpp); run a release build";
#else
  MSCCLPP_REQUIRE_GPU();
  DeviceBuffer<LL8Packet> packets(2);
  DeviceBuffer<uint64_t> calibration(1);
  DeviceBuffer<uint64_t> times(2);
  DeviceBuffer<uint32_t> out(1);
  ASSERT_TRUE(packets.ok() && calibration.ok() && times.ok() && out.ok());
  lateWriterKernel<<<3, 1>>>(packets.get(), packets.get() + 1, calibration.get(), times.get(), out.get());
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.toHost()[0], kPayload);
  const std::vector<uint64_t> cycles = times.toHost();
  EXPECT_GT(cycles[1], cycles[0]) << "the wait lasted " << cycles[1] << " cycles, " << kOldDefaultSpins
                                  << " spins took " << cycles[0];
#endif
}
