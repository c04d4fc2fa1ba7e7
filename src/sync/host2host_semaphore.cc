// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

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

// A waiter spins this many checks (a few microseconds) before sleeping in slices of kSleepSlice; each
// sleep counts as kChecksPerSleep checks against maxSpinCount (so 1e7 checks is about 5 s of sleeping).
constexpr int64_t kSpinsBeforeSleep = 2000;
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
  for (uint64_t value; (value = loadAcquire(token)) < expected;) {
    if (maxSpinCount >= 0 && spins >= maxSpinCount) {
      MSCCLPP_THROW(Timeout, "Host2HostSemaphore::wait: no signal after ", maxSpinCount, " checks (expected count ",
                    expected, ", have ", value, ")");
    }
    // Spin briefly for latency, then sleep until the transport's receiver thread (which may need this
    // very core) stores the token. A sleep counts as many checks, so the default limit is seconds.
    if (spins < kSpinsBeforeSleep) {
      ++spins;
    } else {
      sleepWhileTokenIs(token, value, kSleepSlice);
      spins += kChecksPerSleep;
    }
  }
  *expectedInboundToken_ = expected;
}

}  // namespace mscclpp
