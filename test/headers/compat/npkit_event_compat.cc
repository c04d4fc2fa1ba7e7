// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/npkit/npkit_event.hpp>

namespace compat {

static_assert(NPKIT_EVENT_INVALID == 0x0 && NPKIT_EVENT_TIME_SYNC_GPU == 0x1 && NPKIT_EVENT_TIME_SYNC_CPU == 0x2);
static_assert(NPKIT_EVENT_CONN_IB_FLUSH_EXIT == 0xE && NPKIT_EVENT_CONN_ETH_RECV_DATA_EXIT == 0x18);
static_assert(NPKIT_EVENT_EXECUTOR_INIT_ENTRY == 0x19 && NPKIT_EVENT_KERNEL_ALLREDUCE_EXIT == 0x1C);
static_assert(NPKIT_EVENT_EXECUTOR_OP_BASE_ENTRY == 0x1D && NPKIT_EVENT_EXECUTOR_OP_BASE_EXIT == 0x39);

}  // namespace compat
