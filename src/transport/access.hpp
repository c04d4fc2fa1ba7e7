// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The library's door into the pimpls of Endpoint, Connection and Context (see memory/access.hpp).
// The public classes befriend these structs only, so every use of a pimpl inside the library goes
// through one of them.

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

struct ConnectionAccess {
  static const std::shared_ptr<BaseConnection>& impl(const Connection& c) { return c.impl_; }
  static Connection make(std::shared_ptr<BaseConnection> impl) { return Connection(std::move(impl)); }
};

struct ContextAccess {
  using Impl = Context::Impl;
  static Impl& impl(const Context& c) { return *c.pimpl_; }
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ACCESS_HPP_
