// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The library's door into the pimpls of SemaphoreStub and Semaphore (see memory/access.hpp).

#ifndef MSCCLPP_SYNC_ACCESS_HPP_
#define MSCCLPP_SYNC_ACCESS_HPP_

#include <memory>
#include <mscclpp/core.hpp>

namespace mscclpp {

struct SemaphoreStubAccess {
  using Impl = SemaphoreStub::Impl;
  static const std::shared_ptr<Impl>& impl(const SemaphoreStub& s) { return s.pimpl_; }
};

struct SemaphoreAccess {
  using Impl = Semaphore::Impl;
  static const std::shared_ptr<Impl>& impl(const Semaphore& s) { return s.pimpl_; }
};

}  // namespace mscclpp

#endif  // MSCCLPP_SYNC_ACCESS_HPP_
