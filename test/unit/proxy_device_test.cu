// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The host side of the FIFO (Fifo::poll/pop) and the Proxy thread's start and stop, with requests
// pushed by a real kernel.

#include <gtest/gtest.h>

#include <atomic>
#include <mscclpp/errors.hpp>
#include <mscclpp/fifo.hpp>
#include <mscclpp/proxy.hpp>
#include <string>

#include "common/process_stats.hpp"
#include "device_test_util.hpp"

using namespace mscclpp;

namespace {

constexpr int64_t kTestSpinLimit = 100000000;

__global__ void pushOneKernel(FifoDeviceHandle fifo, uint64_t fst, uint64_t snd) {
  ProxyTrigger trigger;
  trigger.fst = fst;
  trigger.snd = snd;
  fifo.push(trigger, kTestSpinLimit);
}

void expectInitError(const std::function<void()>& fn, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << what << ": returned without the init's error";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("init refused"), std::string::npos) << what << ": " << e.what();
  }
}

ProxyHandler countingHandler(std::atomic<int>& handled) {
  return [&handled](ProxyTrigger) {
    handled.fetch_add(1);
    return ProxyHandlerResult::Continue;
  };
}

void refusingInit() { throw Error("init refused", ErrorCode::InvalidUsage); }

}  // namespace

TEST(FifoTest, PopClearsBothWordsOfTheSlot) {
  MSCCLPP_REQUIRE_GPU();
  // One slot: every push reuses it, so what pop leaves there is what the next poll reads first.
  Fifo fifo(1);
  pushOneKernel<<<1, 1>>>(fifo.deviceHandle(), 0x1111, 0x2222);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  ProxyTrigger first = fifo.poll();
  EXPECT_EQ(first.fst, 0x1111u);
  EXPECT_EQ(first.snd & ~detail::TriggerValidBitMask, 0x2222u);
  fifo.pop();
  // A later push may make either word visible first: a stale word left behind would pair with it.
  ProxyTrigger empty = fifo.poll();
  EXPECT_EQ(empty.fst, 0u) << "pop leaves fst of the freed slot zero";
  EXPECT_EQ(empty.snd, 0u) << "pop leaves snd of the freed slot zero";
  pushOneKernel<<<1, 1>>>(fifo.deviceHandle(), 0x3333, 0x4444);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  ProxyTrigger second = fifo.poll();
  EXPECT_EQ(second.fst, 0x3333u);
  EXPECT_EQ(second.snd & ~detail::TriggerValidBitMask, 0x4444u);
  fifo.pop();
}

TEST(ProxyTest, AFailedInitIsReportedByABlockingStartAndNothingIsServed) {
  MSCCLPP_REQUIRE_GPU();
  std::atomic<int> handled{0};
  Proxy proxy(countingHandler(handled), refusingInit, 4);
  // A request is already waiting when the thread starts.
  pushOneKernel<<<1, 1>>>(proxy.fifo()->deviceHandle(), 0x10, 0x20);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  const std::set<int> threads = test::threadIds();
  expectInitError([&] { proxy.start(true); }, "start(true)");
  // start(true) has joined the thread: nothing can be served after this point either.
  EXPECT_TRUE(test::newThreads(threads).empty()) << "the proxy thread ended";
  EXPECT_EQ(handled.load(), 0) << "a proxy whose init failed served a request";
  EXPECT_NE(proxy.fifo()->poll().fst, 0u) << "the waiting request is still in the FIFO";
  EXPECT_NO_THROW(proxy.stop()) << "the init's error was reported once, by start";
}

TEST(ProxyTest, AFailedInitAfterANonBlockingStartIsRethrownByStop) {
  MSCCLPP_REQUIRE_GPU();
  std::atomic<int> handled{0};
  Proxy proxy(countingHandler(handled), refusingInit, 4);
  pushOneKernel<<<1, 1>>>(proxy.fifo()->deviceHandle(), 0x10, 0x20);
  MSCCLPP_TEST_CUDA(cudaGetLastError());
  MSCCLPP_TEST_CUDA(cudaDeviceSynchronize());
  proxy.start(false);
  expectInitError([&] { proxy.stop(); }, "stop()");
  EXPECT_EQ(handled.load(), 0) << "a proxy whose init failed served a request";
}
