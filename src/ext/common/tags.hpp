// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The Bootstrap / Communicator tags the extensions use for their own setup messages, in one place so
// that they stay apart from each other and from the small tags users start with (0, 1, ...). Each is
// four ASCII letters read as a big-endian int ("Coll", "EXC\0", "NCCL"): far from small numbers and
// recognisable in a trace.

#ifndef MSCCLPP_EXT_COMMON_TAGS_HPP_
#define MSCCLPP_EXT_COMMON_TAGS_HPP_

namespace mscclpp {
namespace ext {

/// Collectives: the exchange of scratch buffers at construction.
constexpr int kCollectivesSetupTag = 0x436f6c6c;
/// Collectives: the exchange of user buffers by registerBuffer.
constexpr int kCollectivesRegisterTag = kCollectivesSetupTag + 1;
/// Collectives: rank 0's tuning table at construction.
constexpr int kCollectivesTuningTag = kCollectivesSetupTag + 2;
/// Collectives: the exchange of user buffers at graph capture (capture_registry.hpp).
constexpr int kCollectivesCaptureTag = kCollectivesSetupTag + 3;

/// Executor: connections, memory and the two kinds of semaphores of a plan's setup.
constexpr int kExecutorConnectionTag = 0x45584300;
constexpr int kExecutorMemoryTag = 0x45584301;
constexpr int kExecutorMemorySemaphoreTag = 0x45584302;
constexpr int kExecutorPortSemaphoreTag = 0x45584303;

/// NCCL API: the first control-message tag of a communicator; every split and shrink takes the next
/// one, so the tags from here up to INT_MAX belong to the NCCL API.
constexpr int kNcclControlTagBase = 0x4e43434c;

static_assert(kCollectivesCaptureTag < kExecutorConnectionTag && kExecutorPortSemaphoreTag < kNcclControlTagBase,
              "the extensions' tags do not overlap");

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_TAGS_HPP_
