// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <chrono>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/semaphore.hpp>

#include "common/checks.hpp"
#include "common/token_wait.hpp"
#include "transport/access.hpp"
#include "transport/connection.hpp"

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

uint64_t loadAcquire(const void* token) { return atomicLoad(static_cast<const uint64_t*>(token), memoryOrderAcquire); }

// A waiter spins for kSpinTime before sleeping in slices of kSleepSlice. The spin covers a network
// round trip on a quiet host (tens of microseconds), so a prompt signal costs no wake-up; a late one
// costs a spin of this length and then sleeps. Between slices it checks the connection, so a peer
// that died (its connection closed) fails the wait within a slice, whatever the limit.
constexpr std::chrono::microseconds kSpinTime(100);
constexpr int kChecksPerClockRead = 64;
constexpr std::chrono::microseconds kSleepSlice(50);
// The limit is a time: maxSpinCount checks stand for maxSpinCount times this long, so the default
// 1e7 is 5 s however long each check or sleep actually takes on a busy host.
constexpr std::chrono::nanoseconds kTimePerCheck(500);

}  // namespace

Host2HostSemaphore::Host2HostSemaphore(const Semaphore& semaphore)
    : semaphore_(checkHostSide(semaphore)),
      expectedInboundToken_(std::make_unique<uint64_t>(0)),
      outboundToken_(std::make_unique<uint64_t>(0)) {}

Host2HostSemaphore::Host2HostSemaphore(Communicator& communicator, const Connection& connection)
    : Host2HostSemaphore(
          communicator.buildSemaphore(connection, communicator.remoteRankOf(connection), communicator.tagOf(connection))
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
  using Clock = std::chrono::steady_clock;
  const uint64_t expected = *expectedInboundToken_ + 1;
  const uint64_t* token = static_cast<const uint64_t*>(semaphore_.localMemory().data());
  const BaseConnection& connection = *ConnectionAccess::impl(semaphore_.connection());
  const auto start = Clock::now();
  const bool limited = maxSpinCount >= 0;
  const auto limit =
      std::chrono::duration_cast<Clock::duration>(kTimePerCheck * static_cast<double>(limited ? maxSpinCount : 0));
  int64_t spins = 0;
  bool sleeping = false;
  for (uint64_t value; (value = loadAcquire(token)) < expected;) {
    // Spin for latency, then sleep until the transport's receiver thread (which may need this very
    // core) stores the token.
    if (!sleeping && ++spins % kChecksPerClockRead != 0) continue;
    const auto now = Clock::now();
    if (connection.failed()) {
      // The receiver stores every update that arrived before it latches the end of the connection,
      // and `value` may predate both: a signal the peer sent before it closed still counts.
      if ((value = loadAcquire(token)) >= expected) break;
      std::string why;
      try {
        connection.throwIfLatched();
      } catch (const std::exception& e) {
        why = e.what();
      }
      MSCCLPP_THROW(Aborted,
                    "Host2HostSemaphore::wait: the connection failed while waiting for a signal (expected "
                    "count ",
                    expected, ", have ", value, "): ", why);
    }
    if (limited && now - start >= limit) {
      MSCCLPP_THROW(Timeout, "Host2HostSemaphore::wait: no signal after ", maxSpinCount, " checks (",
                    std::chrono::duration_cast<std::chrono::milliseconds>(limit).count(), " ms; expected count ",
                    expected, ", have ", value, ")");
    }
    if (!sleeping) {
      sleeping = now - start >= kSpinTime;
      continue;
    }
    sleepWhileTokenIs(token, value, kSleepSlice);
  }
  *expectedInboundToken_ = expected;
}

}  // namespace mscclpp
