// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/token_wait.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <mscclpp/atomic_device.hpp>

namespace mscclpp {
namespace {

// Threads of this process currently asleep on some token. A writer that stores a token and then sees
// 0 here knows nobody can be asleep on it: a sleeper increments the count before its last look at the
// token (both sequentially consistent), so either it sees the new value or the writer sees it.
std::atomic<int> sleepers{0};

// The futex is the token's low 32-bit word (x86-64 is little-endian); a token that changes changes
// that word, except across a 2^32 wrap, which the timeout covers.
int* futexWord(const uint64_t* token) { return reinterpret_cast<int*>(const_cast<uint64_t*>(token)); }

}  // namespace

void sleepWhileTokenIs(const uint64_t* token, uint64_t observed, std::chrono::microseconds timeout) {
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (atomicLoad(token, memoryOrderSeqCst) == observed) {
    timespec ts{static_cast<time_t>(timeout.count() / 1000000), static_cast<long>(timeout.count() % 1000000) * 1000};
    // FUTEX_WAIT returns at once if the word no longer holds the observed value.
    syscall(SYS_futex, futexWord(token), FUTEX_WAIT_PRIVATE, static_cast<int>(observed & 0xffffffffu), &ts, nullptr, 0);
  }
  sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void notifyTokenWritten(const uint64_t* token) {
  if (sleepers.load(std::memory_order_seq_cst) == 0) return;
  syscall(SYS_futex, futexWord(token), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace mscclpp
