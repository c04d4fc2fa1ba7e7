// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <chrono>
#include <mscclpp/semaphore.hpp>

#include "common/checks.hpp"
#include "common/token_wait.hpp"

namespace mscclpp {
namespace {

const Semaphore& checkHostSide(const Semaphore& semaphore) {
  Connection& connection = const_cast<Semaphore&>(semaphore).connection();
  MSCCLPP_CHECK_USAGE(connection.localDevice().type == DeviceType::CPU,
                      "Host2HostSemaphore: the connection's local device must be the CPU, not ",
                      connection.localDevice().type);
  MSCCLPP_CHECK_USAGE(connection.transport() != Transport::CudaIpc,
                      "Host2HostSemaphore: CudaIpc connections cannot carry host-to-host signals");
  return semaphore;
}

uint64_t loadAcquire(const void* token) {
  return __atomic_load_n(static_cast<const uint64_t*>(token), __ATOMIC_ACQUIRE);
}

// A waiter spins for kSpinTime before sleeping in slices of kSleepSlice. The spin covers a network
// round trip on a quiet host (tens of microseconds), so a prompt signal costs no wake-up; a late one
// costs a spin of this length and then sleeps. Each sleep counts as kChecksPerSleep checks against
// maxSpinCount (so the default 1e7 checks is about 5 s of sleeping).
constexpr std::chrono::microseconds kSpinTime(100);
constexpr int kChecksPerClockRead = 64;
constexpr std::chrono::microseconds kSleepSlice(50);
constexpr int64_t kChecksPerSleep = 100;

}  // namespace

Host2HostSemaphore::Host2HostSemaphore(const Semaphore& semaphore)
    : semaphore_(checkHostSide(semaphore)),
      expectedInboundToken_(std::make_unique<uint64_t>(0)),
      outboundToken_(std::make_unique<uint64_t>(0)) {}

Host2HostSemaphore::Host2HostSemaphore(Communicator& communicator, const Connection& connection)
    : Host2HostSemaphore(communicator
                             .buildSemaphore(connection, communicator.remoteRankOf(connection),
                                             communicator.tagOf(connection))
                             .get()) {}

Connection& Host2HostSemaphore::connection() { return semaphore_.connection(); }

void Host2HostSemaphore::signal() {
  semaphore_.connection().updateAndSync(semaphore_.remoteMemory(), 0, outboundToken_.get(), *outboundToken_ + 1);
}

bool Host2HostSemaphore::poll() {
  if (loadAcquire(semaphore_.localMemory().data()) > *expectedInboundToken_) {
    ++*expectedInboundToken_;
    return true;
  }
  return false;
}

void Host2HostSemaphore::wait(int64_t maxSpinCount) {
  const uint64_t expected = *expectedInboundToken_ + 1;
  const uint64_t* token = static_cast<const uint64_t*>(semaphore_.localMemory().data());
  int64_t spins = 0;
  bool sleeping = false;
  std::chrono::steady_clock::time_point spinUntil;
  for (uint64_t value; (value = loadAcquire(token)) < expected;) {
    if (maxSpinCount >= 0 && spins >= maxSpinCount) {
      MSCCLPP_THROW(Timeout, "Host2HostSemaphore::wait: no signal after ", maxSpinCount, " checks (expected count ",
                    expected, ", have ", value, ")");
    }
    // Spin for latency, then sleep until the transport's receiver thread (which may need this very
    // core) stores the token.
    if (sleeping) {
      sleepWhileTokenIs(token, value, kSleepSlice);
      spins += kChecksPerSleep;
      continue;
    }
    if (spins % kChecksPerClockRead == 0) {
      auto now = std::chrono::steady_clock::now();
      if (spins == 0) spinUntil = now + kSpinTime;
      sleeping = now >= spinUntil;
    }
    ++spins;
  }
  *expectedInboundToken_ = expected;
}

}  // namespace mscclpp
