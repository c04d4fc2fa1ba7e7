// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_CONTEXT_IMPL_HPP_
#define MSCCLPP_TRANSPORT_CONTEXT_IMPL_HPP_

#include <atomic>
#include <map>
#include <memory>
#include <mscclpp/core.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mutex>

#include "memory/memory_accounting.hpp"
#include "memory/token_pool.hpp"
#include "transport/access.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

/// Resources shared by everything made from one Context. Members are guarded by `mutex` unless atomic.
struct Context::Impl {
  /// `transport`'s per-Context state (TransportFactory::createContextState), made on first use; State
  /// is the type that transport's factory makes. Throws Error(InternalError) for a transport that keeps
  /// none.
  template <typename State>
  State& transportState(Context& context, Transport transport) {
    return static_cast<State&>(transportStateBase(context, transport));
  }

  /// A zeroed 8-byte word of GPU `deviceId`'s memory, exportable to peers: semaphore tokens and the
  /// semaphores' private counters. Freed (and zeroed for reuse) when the last copy is dropped.
  /// Served by a TokenPool per GPU, made on the first request: tokens share one allocation and one
  /// export per chunk (a granule) instead of costing one each. `placement`: see TokenPlacement.
  std::shared_ptr<uint64_t> deviceToken(int deviceId, TokenPlacement placement = TokenPlacement::Packed);

  TransportContextState& transportStateBase(Context& context, Transport transport);

  mutable std::mutex mutex;
  std::map<Transport, std::unique_ptr<TransportContextState>> transportStates;
  std::map<int, std::shared_ptr<TokenPool>> tokenPools;
  /// Shared with the objects that charge it, which may outlive the Context.
  std::shared_ptr<MemoryAccounting> accounting = std::make_shared<MemoryAccounting>();
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_CONTEXT_IMPL_HPP_
