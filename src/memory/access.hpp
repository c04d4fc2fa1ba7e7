// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The library's door into RegisteredMemory's pimpl. The public class befriends this struct only; each
// layer that owns a public type has such a door (transport/access.hpp, sync/access.hpp).

#ifndef MSCCLPP_MEMORY_ACCESS_HPP_
#define MSCCLPP_MEMORY_ACCESS_HPP_

#include <memory>
#include <mscclpp/core.hpp>

namespace mscclpp {

struct RegisteredMemoryAccess {
  using Impl = RegisteredMemory::Impl;
  static const std::shared_ptr<Impl>& impl(const RegisteredMemory& m) { return m.pimpl_; }
  static RegisteredMemory make(std::shared_ptr<Impl> impl) { return RegisteredMemory(std::move(impl)); }
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_ACCESS_HPP_
