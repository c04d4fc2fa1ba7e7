// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_IB_IBVERBS_HPP_
#define MSCCLPP_TRANSPORT_IB_IBVERBS_HPP_

#include <string>

#include "transport/ib/ibv_table.hpp"

namespace mscclpp {

/// The verbs provider of this process, loaded once (thread-safe) and kept loaded until exit.
struct IbVerbs {
  /// nullptr when no provider could be loaded; `unavailableReason` says why.
  const IbvTable* table = nullptr;
  std::string unavailableReason;
  /// The library that was loaded (or tried last), for messages.
  std::string library;
};

const IbVerbs& ibVerbs();

/// The table, or Error(InvalidUsage) "IB is unavailable: <reason>" when there is none.
const IbvTable& ibv();

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IBVERBS_HPP_
