// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// A real NCCL, opened with dlopen from MSCCLPP_NCCL_LIB_PATH, for what this library does not do
// itself in a given configuration. NCCL calls its own API internally (ncclCommInitAll calls
// ncclGroupStart, every ncclCommEnsureReady calls ncclCommGetAsyncError), and those calls must reach
// NCCL, not the functions of the same names here that are first in the global scope when this library
// is preloaded. Opening it with RTLD_DEEPBIND does that when our dlopen is the first to load it. Where
// the process had already loaded it into the global scope (torch does so at import), its references were
// bound to ours before we opened it, so the functions here that NCCL calls internally forward a
// communicator that is not ours to the real NCCL (openedRealNccl()).

#ifndef MSCCLPP_EXT_NCCL_REAL_NCCL_HPP_
#define MSCCLPP_EXT_NCCL_REAL_NCCL_HPP_

#include <string>

#include "ext/nccl/api_functions.hpp"

namespace mscclpp::nccl {

struct RealNccl {
#define MSCCLPP_NCCL_REAL_FIELD(ret, name, params, args) ret(*name) params = nullptr;
  MSCCLPP_NCCL_FOR_EACH_FUNCTION(MSCCLPP_NCCL_REAL_FIELD)
#undef MSCCLPP_NCCL_REAL_FIELD
  /// The library's ncclGetVersion code.
  int version = 0;
  std::string path;
};

/// The real NCCL of this process, opened on first use; nullptr when MSCCLPP_NCCL_LIB_PATH is unset or
/// the library there cannot be used (realNcclProblem() then says why).
const RealNccl* realNccl();

/// The real NCCL if realNccl() has opened it already, else nullptr; never opens it.
const RealNccl* openedRealNccl();

/// Why realNccl() is nullptr, as a sentence for ncclGetLastError.
const std::string& realNcclProblem();

}  // namespace mscclpp::nccl

#endif  // MSCCLPP_EXT_NCCL_REAL_NCCL_HPP_
