// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// NpKit without event recording: see include/mscclpp/npkit/npkit.hpp.

#include <mscclpp/npkit/npkit.hpp>

#include "common/logger.hpp"

void NpKit::Init(int rank) {
  LOG_WARN(ENV, "NpKit::Init(", rank, "): libmscclpp records no NpKit events; no trace will be written");
}

void NpKit::Dump(const std::string& dump_dir) {
  LOG_WARN(ENV, "NpKit::Dump(", dump_dir, "): libmscclpp records no NpKit events; nothing written");
}

void NpKit::Shutdown() {}

NpKitEventCollectContext* NpKit::GetGpuEventCollectContexts() { return nullptr; }

void NpKit::CollectCpuEvent(uint8_t, uint32_t, uint32_t, uint64_t, int) {}

uint64_t* NpKit::GetCpuTimestamp() {
  // A stable address, so instrumented code that dereferences it reads 0 instead of crashing.
  static uint64_t timestamp = 0;
  return &timestamp;
}
