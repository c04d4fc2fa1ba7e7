// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// NCCL's group semantics. Each thread has a nesting depth; between ncclGroupStart and the outermost
// ncclGroupEnd, operations are recorded, not run, and the outermost ncclGroupEnd runs them together:
// the sends and receives of one communicator as one batch (so they may be posted in any order), the
// forwarded operations of every communicator inside one group of the real NCCL, and communicator
// inits on threads of their own (so one thread can init every rank of a single-process group).
// Outside a group an operation runs at once, as a group of one.

#ifndef MSCCLPP_EXT_NCCL_GROUP_HPP_
#define MSCCLPP_EXT_NCCL_GROUP_HPP_

#include <mscclpp/nccl.h>

#include <functional>

#include "ext/nccl/calls.hpp"
#include "ext/nccl/comm.hpp"

namespace mscclpp::nccl {

/// Records `task` inside a group, or runs it now outside one. Throws when our collectives fail;
/// returns the real NCCL's result for a task forwarded to it.
ncclResult_t submit(const Task& task);

/// Records an init that must wait for the group's end (inside a group), or runs it now.
void submitInit(std::function<void()> init);

bool inGroup();
void groupStart();
/// Returns ncclInvalidUsage (and sets the last error) at depth 0; throws if a recorded operation fails
/// on our collectives, and returns the real NCCL's result for those forwarded to it.
ncclResult_t groupEnd();
/// Drops what the group recorded without running it.
ncclResult_t groupSimulateEnd();

}  // namespace mscclpp::nccl

#endif  // MSCCLPP_EXT_NCCL_GROUP_HPP_
