// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// A plan file read and checked for one rank (ExecutionPlan::Impl), and its resolution for one set of
// buffer sizes into the flat arrays of device_plan.hpp. The work is split by job: plan_file.cc reads
// the file, plan_parser.cc checks its text (through plan_json.hpp and op_vocabulary.hpp), resolve.cc
// resolves it for sizes.

#ifndef MSCCLPP_EXT_EXECUTOR_PLAN_HPP_
#define MSCCLPP_EXT_EXECUTOR_PLAN_HPP_

#include <cstdint>
#include <mscclpp/executor.hpp>
#include <string>
#include <vector>

#include "ext/executor/device_plan.hpp"

namespace mscclpp {

namespace executor {

/// Chunks [index, index + count) of a local buffer, or of remote buffer `remoteBuffer` of this GPU.
struct ChunkRef {
  bool remote = false;
  BufferType type = BufferType::Input;  // for a remote ref: the type of the peer's buffer
  uint32_t remoteBuffer = 0;
  uint32_t index = 0;
  uint32_t count = 0;
};

struct PlanOp {
  OpType type = OpType::Nop;
  ChannelType channelType = ChannelType::None;
  std::vector<uint32_t> indices;  // GPU-wide channel ids of channelType, or semaphore ids
  std::vector<ChunkRef> srcs;
  std::vector<ChunkRef> dsts;
  uint32_t barrierId = 0;
  uint32_t barrierBlocks = 0;
  uint32_t tbgId = 0;
  uint32_t tbgSize = 1;
  uint64_t unitSize = 0;        // pipeline
  uint32_t pipelineChunks = 0;  // pipeline
  std::vector<PlanOp> inner;    // pipeline
};

struct PlanChannel {
  ChannelType type;
  int peer;
};

struct PlanRemoteBuffer {
  int rank;
  BufferType type;
  bool memoryAccess;
  bool portAccess;
};

struct PlanGpu {
  int id = -1;
  uint32_t inputChunks = 0;
  uint32_t outputChunks = 0;
  uint32_t scratchChunks = 0;
  std::vector<PlanChannel> memoryChannels;  // channel id -> peer, in the file's order
  std::vector<PlanChannel> portChannels;
  std::vector<PlanRemoteBuffer> remoteBuffers;
  std::vector<int> semaphoreInits;
  std::vector<std::vector<PlanOp>> threadblocks;  // read for this rank only

  uint32_t chunks(BufferType type) const {
    return type == BufferType::Input ? inputChunks : type == BufferType::Output ? outputChunks : scratchChunks;
  }
};

/// A plan resolved for given buffer sizes and packet type: what the device arrays hold.
struct ResolvedPlan {
  uint64_t chunkSize = 0;
  uint64_t scratchSize = 0;  // bytes to allocate (both halves with double scratch)
  uint64_t scratchHalf = 0;  // offset of the second half, 0 without double scratch
  std::vector<DeviceBlock> blocks;
  std::vector<DeviceOp> ops;
  std::vector<DeviceOperand> operands;
  std::vector<uint32_t> indices;
  std::vector<uint64_t> remoteBytesNeeded;  // per remote buffer: the end of the furthest byte accessed
  uint32_t nSyncers = 0;
};

}  // namespace executor

struct ExecutionPlan::Impl {
  std::string path;
  int rank = 0;
  std::string name;
  std::string collective;
  bool isUsingPacket = false;
  bool isInPlace = false;
  int nThreadsPerBlock = 1024;
  uint64_t minMessageSize = 0;
  uint64_t maxMessageSize = UINT64_MAX;
  bool reuseResources = false;
  bool doubleScratchBuffer = false;
  uint64_t bufferAlignment = 16;
  std::vector<executor::PlanGpu> gpus;  // indexed by GPU id

  /// Reads and checks the file; Error(ExecutorError) on any problem.
  Impl(const std::string& path, int rank);

  const executor::PlanGpu& self() const { return gpus[rank]; }

  /// Resolves the plan for buffers of these sizes; Error(ExecutorError) if the sizes do not fit the plan
  /// (alignment, chunk divisibility, message size range) or an operand would fall outside its buffer.
  executor::ResolvedPlan resolve(uint64_t inputSize, uint64_t outputSize, PacketType packetType) const;

 private:
  /// The file's bytes; Error(ExecutorError) naming the path when it is missing, unreadable, a
  /// directory or anything else but a regular file, or larger than any plan.
  static std::string readFile(const std::string& path, int rank);
  void parse(const std::string& text);
};

struct ExecutionPlanAccess {
  using Impl = ExecutionPlan::Impl;
  static const std::shared_ptr<Impl>& impl(const ExecutionPlan& plan) { return plan.impl_; }
};

/// The checked plan of one rank, for the executor's own code.
using PlanImpl = ExecutionPlanAccess::Impl;

}  // namespace mscclpp

#endif  // MSCCLPP_EXT_EXECUTOR_PLAN_HPP_
