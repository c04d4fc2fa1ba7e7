// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The NpKit profiler's interface, as MSCCL++ declares it.
//
// This build does not record NpKit events. MSCCL++ records them only when the library is compiled
// with ENABLE_NPKIT and per-event ENABLE_NPKIT_EVENT_* flags; libmscclpp has no such build, so every
// call here is accepted and does nothing:
// - Init() and Dump() log one warning that the library has no NpKit support; Dump() writes no files.
// - Shutdown(), CollectCpuEvent(), CollectGpuEventShm() and StoreGpuEventShm() do nothing.
// - GetGpuEventCollectContexts() returns nullptr; GetCpuTimestamp() points at a timestamp that stays 0.
// Code instrumented for NpKit therefore compiles and runs unchanged, and produces no trace.

#ifndef NPKIT_H_
#define NPKIT_H_

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "../device.hpp"
#include "../gpu_utils.hpp"
#include "npkit_event.hpp"
#include "npkit_struct.hpp"

#if defined(__HIP_PLATFORM_AMD__)
#define NPKIT_GET_GPU_TIMESTAMP wall_clock64
#define NPKIT_MAX_NUM_GPU_THREADBLOCKS 64
#define NPKIT_CPU_TIMESTAMP_SLOT_SIZE 128
#define NPKIT_LOAD_CPU_TIMESTAMP_PER_BLOCK(buf, blk) *(buf + NPKIT_CPU_TIMESTAMP_SLOT_SIZE * blk / sizeof(uint64_t))
#define NPKIT_STORE_CPU_TIMESTAMP_PER_BLOCK(buf, val, blk) \
  *reinterpret_cast<volatile uint64_t*>(buf + NPKIT_CPU_TIMESTAMP_SLOT_SIZE * blk / sizeof(uint64_t)) = val
#else
#define NPKIT_GET_GPU_TIMESTAMP clock64
#endif

/// Events a thread block gathers in shared memory before StoreGpuEventShm().
#define NPKIT_SHM_NUM_EVENTS 64

/// Process-wide profiler state (static members only). Not recording in this build: see above.
class NpKit {
 public:
  static const uint64_t kNumGpuEventBuffers = 1024;
  static const uint64_t kNumCpuEventBuffers = 64;

  static void Init(int rank);
  static void Dump(const std::string& dump_dir);
  static void Shutdown();
  static NpKitEventCollectContext* GetGpuEventCollectContexts();

#if defined(MSCCLPP_DEVICE_COMPILE)
  static MSCCLPP_DEVICE_INLINE void CollectGpuEventShm([[maybe_unused]] uint8_t type, [[maybe_unused]] uint32_t size,
                                                       [[maybe_unused]] uint32_t rsvd,
                                                       [[maybe_unused]] uint64_t timestamp,
                                                       [[maybe_unused]] NpKitEvent* event_buffer,
                                                       [[maybe_unused]] uint64_t* event_buffer_head) {}

  static MSCCLPP_DEVICE_INLINE void StoreGpuEventShm(
      [[maybe_unused]] NpKitEventCollectContext* npKitEventCollectContexts, [[maybe_unused]] NpKitEvent* event_buffer,
      [[maybe_unused]] uint64_t event_buffer_head) {}
#endif

  static void CollectCpuEvent(uint8_t type, uint32_t size, uint32_t rsvd, uint64_t timestamp, int channel_id);
  static uint64_t* GetCpuTimestamp();
};

#endif  // NPKIT_H_
