// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_SYNC_SEMAPHORE_IMPL_HPP_
#define MSCCLPP_SYNC_SEMAPHORE_IMPL_HPP_

#include <memory>
#include <mscclpp/core.hpp>

#include "sync/access.hpp"
#include "transport/access.hpp"

namespace mscclpp {

struct SemaphoreStub::Impl {
  /// Set on the side that made the stub; empty on a deserialized (peer's) stub.
  Connection connection;
  /// The inbound token this side's peer signals (local stubs only).
  std::shared_ptr<uint64_t> token;
  Device device;
  RegisteredMemory memory;
};

struct Semaphore::Impl {
  Connection connection;
  /// Keeps the local token alive as long as the semaphore.
  std::shared_ptr<SemaphoreStubAccess::Impl> localStub;
  RegisteredMemory localMemory;
  RegisteredMemory remoteMemory;
};

}  // namespace mscclpp

#endif  // MSCCLPP_SYNC_SEMAPHORE_IMPL_HPP_
