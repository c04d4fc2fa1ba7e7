// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// NCCL exports every function twice, as nccl* and as pnccl* (the profiling interface); programs and
// profilers may bind either. Each pnccl* forwards to its nccl* function (a tail call: the library is
// linked -Bsymbolic, so the call binds inside it). GCC's alias attribute would need the target in
// this translation unit.

#include "ext/nccl/api_functions.hpp"

#define MSCCLPP_NCCL_ALIAS(ret, name, params, args) \
  extern "C" ret pnccl##name params { return nccl##name args; }
MSCCLPP_NCCL_FOR_EACH_FUNCTION(MSCCLPP_NCCL_ALIAS)
#undef MSCCLPP_NCCL_ALIAS
