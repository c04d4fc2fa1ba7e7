// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The library's own way into the pimpls of public types. Public classes befriend these structs and the
// Impl types are private to them, so internal code names them through the structs' Impl aliases;
// nothing outside src/ (and the tests) uses this header.

#ifndef MSCCLPP_TRANSPORT_ACCESS_HPP_
#define MSCCLPP_TRANSPORT_ACCESS_HPP_

#include <memory>
#include <mscclpp/core.hpp>

namespace mscclpp {

struct EndpointAccess {
  using Impl = Endpoint::Impl;
  static const std::shared_ptr<Impl>& impl(const Endpoint& e) { return e.pimpl_; }
  static Endpoint make(std::shared_ptr<Impl> impl) { return Endpoint(std::move(impl)); }
};

struct RegisteredMemoryAccess {
  using Impl = RegisteredMemory::Impl;
  static const std::shared_ptr<Impl>& impl(const RegisteredMemory& m) { return m.pimpl_; }
  static RegisteredMemory make(std::shared_ptr<Impl> impl) { return RegisteredMemory(std::move(impl)); }
};

struct ConnectionAccess {
  static const std::shared_ptr<BaseConnection>& impl(const Connection& c) { return c.impl_; }
  static Connection make(std::shared_ptr<BaseConnection> impl) { return Connection(std::move(impl)); }
};

struct ContextAccess {
  using Impl = Context::Impl;
  static Impl& impl(const Context& c) { return *c.pimpl_; }
};

struct SemaphoreStubAccess {
  using Impl = SemaphoreStub::Impl;
  static const std::shared_ptr<Impl>& impl(const SemaphoreStub& s) { return s.pimpl_; }
  static SemaphoreStub make(std::shared_ptr<Impl> impl) { return SemaphoreStub(std::move(impl)); }
};

struct SemaphoreAccess {
  using Impl = Semaphore::Impl;
  static const std::shared_ptr<Impl>& impl(const Semaphore& s) { return s.pimpl_; }
};

using EndpointImpl = EndpointAccess::Impl;

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ACCESS_HPP_
