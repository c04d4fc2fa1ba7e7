// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Record layouts of the NpKit profiler (npkit.hpp): one 16-byte event, and the per-buffer write
// position. Packed, as in MSCCL++'s trace files.

#ifndef NPKIT_STRUCT_H_
#define NPKIT_STRUCT_H_

#include <cstdint>

#pragma pack(push, 1)

/// One trace record: type, size and a reserved field in the first word, the timestamp in the second.
union NpKitEvent {
  uint64_t bits[2];
  struct {
    uint64_t type : 8;
    uint64_t size : 32;
    uint64_t rsvd : 24;
    uint64_t timestamp;
  } fields;
};

/// An event buffer and the index of its next free record.
struct NpKitEventCollectContext {
  NpKitEvent* event_buffer;
  uint64_t event_buffer_head;
};

#pragma pack(pop)

#endif  // NPKIT_STRUCT_H_
