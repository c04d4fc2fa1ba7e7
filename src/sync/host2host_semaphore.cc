// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/semaphore.hpp>
#include <thread>

#include "common/checks.hpp"

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
  const void* token = semaphore_.localMemory().data();
  for (int64_t spins = 0; loadAcquire(token) < expected; ++spins) {
    if (maxSpinCount >= 0 && spins >= maxSpinCount) {
      MSCCLPP_THROW(Timeout, "Host2HostSemaphore::wait: no signal after ", maxSpinCount, " checks (expected count ",
                    expected, ", have ", loadAcquire(token), ")");
    }
    // Spin briefly for latency, then give the core away: signals arrive through another thread of
    // this process (the transport's receiver), which may need this core.
    if (spins > 1000) std::this_thread::yield();
  }
  *expectedInboundToken_ = expected;
}

}  // namespace mscclpp
