// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/npkit/npkit_struct.hpp>

namespace compat {

static_assert(sizeof(NpKitEvent) == 16);
static_assert(sizeof(NpKitEventCollectContext) == 16);

uint64_t useNpKitStructs(NpKitEventCollectContext* ctx) {
  NpKitEvent& event = ctx->event_buffer[ctx->event_buffer_head];
  event.fields.type = 1;
  event.fields.size = 2;
  event.fields.rsvd = 3;
  event.fields.timestamp = 4;
  return event.bits[0] + event.bits[1];
}

}  // namespace compat
