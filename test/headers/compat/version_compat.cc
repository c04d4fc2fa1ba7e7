// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/version.hpp>

namespace compat {

static_assert(MSCCLPP_MAJOR == 0 && MSCCLPP_MINOR == 8 && MSCCLPP_PATCH == 0);
static_assert(MSCCLPP_VERSION == MSCCLPP_MAJOR * 10000 + MSCCLPP_MINOR * 100 + MSCCLPP_PATCH);

}  // namespace compat
