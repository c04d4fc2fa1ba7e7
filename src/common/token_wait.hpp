// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Waiting on a 64-bit host counter that another thread of this process increments (a semaphore token
// written by a transport's receiver thread). A waiter spins briefly, then sleeps on a futex; writers
// call notifyTokenWritten() after storing, which costs a system call only while someone sleeps. This
// keeps latency low with spare cores and frees the core when threads outnumber them.

#ifndef MSCCLPP_COMMON_TOKEN_WAIT_HPP_
#define MSCCLPP_COMMON_TOKEN_WAIT_HPP_

#include <chrono>
#include <cstdint>

namespace mscclpp {

/// Sleeps while the token's value is `observed`, at most `timeout`. Returns early on a notify, a
/// change of the value, or spuriously: callers re-check.
void sleepWhileTokenIs(const uint64_t* token, uint64_t observed, std::chrono::microseconds timeout);

/// Wakes the threads sleeping on `token` (after the new value has been stored).
void notifyTokenWritten(const uint64_t* token);

}  // namespace mscclpp

#endif  // MSCCLPP_COMMON_TOKEN_WAIT_HPP_
