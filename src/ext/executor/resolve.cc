// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Resolving a checked plan for one set of buffer sizes: chunk indices become byte ranges, thread block
// groups split their ranges, and every range is checked against the buffer it falls in, so that the
// kernel never has to check anything.

#include <algorithm>

#include "common/checks.hpp"
#include "ext/common/call_bytes.hpp"
#include "ext/executor/op_vocabulary.hpp"
#include "ext/executor/plan.hpp"
#include "ext/executor/plan_error.hpp"

namespace mscclpp {

using namespace executor;

namespace {

/// Whether operand `i` of the inputs (or outputs) of `op` holds packets rather than plain data.
bool isPacketOperand(const PlanOp& op, bool output, size_t i) {
  switch (op.type) {
    case OpType::PutPackets:
      // Through a port channel the proxy copies packets the block has already written to scratch.
      return output || op.channelType == ChannelType::Port;
    case OpType::ReadPutPackets:
      return true;
    case OpType::CopyPackets:
      return output;
    case OpType::UnpackPackets:
      return !output;
    case OpType::ReducePackets:
      return !output && i > 0;
    case OpType::ReduceSendPackets:
    case OpType::ReduceCopyPackets:
    case OpType::ReduceCopySendPackets:
      return i > 0;
    case OpType::Nop:
    case OpType::Barrier:
    case OpType::Put:
    case OpType::PutWithSignal:
    case OpType::PutWithSignalAndFlush:
    case OpType::Get:
    case OpType::Copy:
    case OpType::Signal:
    case OpType::Wait:
    case OpType::Flush:
    case OpType::Reduce:
    case OpType::ReduceSend:
    case OpType::ReadReduce:
    case OpType::ReadReduceSend:
    case OpType::RelaxedSignal:
    case OpType::RelaxedWait:
    case OpType::Pipeline:
    case OpType::SemRelease:
    case OpType::SemAcquire:
      return false;
  }
  return false;
}

class Resolver {
 public:
  Resolver(const PlanImpl& plan, uint64_t inputSize, uint64_t outputSize, PacketType packetType)
      : plan_(plan), inputSize_(inputSize), outputSize_(outputSize), packetType_(packetType) {}

  ResolvedPlan run() {
    const PlanGpu& gpu = plan_.self();
    const uint64_t align = plan_.bufferAlignment;
    auto fail = [&](const std::string& what) { Where{plan_.path, plan_.rank, ""}.fail(what + sizes()); };
    // Bounded first, so that no size derived below (the scratch, packets of twice the payload) can wrap.
    if (inputSize_ > ext::kMaxCallBytes || outputSize_ > ext::kMaxCallBytes) {
      fail(concat("the ", inputSize_ > ext::kMaxCallBytes ? "input" : "output", " is larger than the ",
                  ext::kMaxCallBytes, " bytes a buffer of one call may hold"));
    }
    if (gpu.inputChunks > 0 && (inputSize_ % align != 0 || (inputSize_ / align) % gpu.inputChunks != 0)) {
      fail(concat("the input size is not a multiple of ", gpu.inputChunks, " chunks of ", align, "-byte units"));
    }
    if (gpu.outputChunks > 0 && (outputSize_ % align != 0 || (outputSize_ / align) % gpu.outputChunks != 0)) {
      fail(concat("the output size is not a multiple of ", gpu.outputChunks, " chunks of ", align, "-byte units"));
    }
    if (gpu.inputChunks > 0 && gpu.outputChunks > 0 && inputSize_ / gpu.inputChunks != outputSize_ / gpu.outputChunks) {
      fail(concat("input chunks (", inputSize_ / gpu.inputChunks, " bytes) and output chunks (",
                  outputSize_ / gpu.outputChunks, " bytes) differ in size"));
    }
    const uint64_t messageSize = plan_.collective == "allgather" ? outputSize_ : inputSize_;
    if (messageSize < plan_.minMessageSize || messageSize > plan_.maxMessageSize) {
      fail(concat("the message size ", messageSize, " is outside the plan's range [", plan_.minMessageSize, ", ",
                  plan_.maxMessageSize, "]"));
    }
    r_.chunkSize = gpu.inputChunks > 0 ? inputSize_ / gpu.inputChunks : outputSize_ / gpu.outputChunks;
    if (r_.chunkSize == 0) fail("the buffers are empty");
    // Every rank sizes its scratch from the largest scratch of the plan, so that the second half of a
    // double scratch starts at the same offset on every rank (peers write packets at that offset).
    uint32_t scratchChunks = 0;
    for (const auto& g : plan_.gpus) scratchChunks = std::max(scratchChunks, g.scratchChunks);
    // Packets take twice their payload; a double scratch holds two such halves.
    const uint64_t copies = (plan_.isUsingPacket ? 2 : 1) * (plan_.doubleScratchBuffer ? 2 : 1);
    uint64_t scratchBytes = 0;
    if (!ext::callBytes(r_.chunkSize, uint64_t{scratchChunks} * copies, 1, scratchBytes)) {
      fail(concat("the plan's scratch (", scratchChunks, " chunks of ", r_.chunkSize, " bytes, ", copies,
                  " times) is larger than the ", ext::kMaxCallBytes, " bytes a buffer of one call may hold"));
    }
    r_.scratchSize = scratchBytes;
    r_.scratchHalf = plan_.doubleScratchBuffer ? scratchBytes / 2 : 0;
    payload_ = packetType_ == PacketType::LL8 ? 4 : 8;

    r_.remoteBytesNeeded.assign(gpu.remoteBuffers.size(), 0);
    for (size_t tb = 0; tb < gpu.threadblocks.size(); ++tb) {
      DeviceBlock block{};
      block.firstOp = static_cast<uint32_t>(r_.ops.size());
      block.firstOperand = static_cast<uint32_t>(r_.operands.size());
      block.firstIndex = static_cast<uint32_t>(r_.indices.size());
      block_ = &block;
      const auto& ops = gpu.threadblocks[tb];
      for (size_t i = 0; i < ops.size(); ++i) {
        place_ = concat("threadblock ", tb, ", op ", i, " (", opName(ops[i].type), ")");
        addOp(ops[i]);
        if (ops[i].type == OpType::Pipeline) {
          for (size_t j = 0; j < ops[i].inner.size(); ++j) {
            place_ = concat("threadblock ", tb, ", op ", i, " (pipeline), pipeline op ", j, " (",
                            opName(ops[i].inner[j].type), ")");
            addOp(ops[i].inner[j]);
          }
        }
      }
      block.nOps = static_cast<uint32_t>(r_.ops.size()) - block.firstOp;
      block.nOperands = static_cast<uint32_t>(r_.operands.size()) - block.firstOperand;
      block.nIndices = static_cast<uint32_t>(r_.indices.size()) - block.firstIndex;
      r_.blocks.push_back(block);
    }
    return std::move(r_);
  }

 private:
  /// " (input N bytes, output M bytes)": what every message of a resolution ends with.
  std::string sizes() const { return concat(" (input ", inputSize_, " bytes, output ", outputSize_, " bytes)"); }

  [[noreturn]] void failOp(const std::string& what) const {
    Where{plan_.path, plan_.rank, place_}.fail(what + sizes());
  }

  uint64_t localBytes(BufferType t) const {
    return t == BufferType::Input ? inputSize_ : t == BufferType::Output ? outputSize_ : r_.scratchSize;
  }

  /// `packets`: the range holds packets; `packetOp`: the op moves packets (its data side is read and
  /// written in whole payloads too).
  DeviceOperand operand(const PlanOp& op, const ChunkRef& ref, bool packets, bool packetOp) {
    const uint64_t align = plan_.bufferAlignment;
    const uint64_t begin = uint64_t(ref.index) * r_.chunkSize;
    const uint64_t bytes = uint64_t(ref.count) * r_.chunkSize;
    // Thread block groups split the range in whole alignment units, the first parts taking one more.
    const uint64_t units = bytes / align;
    const uint64_t base = units / op.tbgSize, extra = units % op.tbgSize;
    const uint64_t partBegin = op.tbgId * base + std::min<uint64_t>(op.tbgId, extra);
    const uint64_t partEnd = (op.tbgId + 1) * base + std::min<uint64_t>(op.tbgId + 1, extra);
    DeviceOperand d{};
    d.offset = begin + partBegin * align;
    d.size = (partEnd - partBegin) * align;
    d.buffer = static_cast<uint8_t>(ref.type);
    d.remote = ref.remote ? 1 : 0;
    d.ref = ref.remote ? ref.remoteBuffer : 0;
    d.packets = packets ? 1 : 0;
    if (packetOp && (d.offset % payload_ != 0 || d.size % payload_ != 0)) {
      failOp(concat("a packet range of ", d.size, " bytes at ", d.offset, " is not a multiple of the ", payload_,
                    "-byte payload of ", packetType_ == PacketType::LL8 ? "LL8" : "LL16", " packets"));
    }
    // Where the last byte falls in its buffer: packets take twice their payload, and scratch ranges may
    // sit in the second half of a double scratch.
    uint64_t end = packets ? 2 * (d.offset + d.size) : d.offset + d.size;
    if (ref.type == BufferType::Scratch) end += r_.scratchHalf;
    if (ref.remote) {
      r_.remoteBytesNeeded[ref.remoteBuffer] = std::max(r_.remoteBytesNeeded[ref.remoteBuffer], end);
    } else if (end > localBytes(ref.type)) {
      failOp(concat("bytes up to ", end, " of the local ", bufferName(ref.type), " buffer, which has ",
                    localBytes(ref.type)));
    }
    if (packets) d.offset *= 2;
    return d;
  }

  void addOp(const PlanOp& op) {
    DeviceOp d{};
    d.type = static_cast<uint8_t>(op.type);
    d.channelType = static_cast<uint8_t>(op.channelType);
    d.nInputs = static_cast<uint16_t>(op.srcs.size());
    d.nOutputs = static_cast<uint16_t>(op.dsts.size());
    // Counted from the block's first: each block decodes its own table.
    d.firstOperand = static_cast<uint32_t>(r_.operands.size()) - block_->firstOperand;
    d.firstIndex = static_cast<uint32_t>(r_.indices.size()) - block_->firstIndex;
    d.nIndices = static_cast<uint32_t>(op.indices.size());
    if (op.srcs.size() > UINT16_MAX || op.dsts.size() > UINT16_MAX) failOp("more than 65535 operands");
    bool packetOp = false;
    for (size_t i = 0; i < op.srcs.size(); ++i) packetOp |= isPacketOperand(op, false, i);
    for (size_t i = 0; i < op.dsts.size(); ++i) packetOp |= isPacketOperand(op, true, i);
    for (size_t i = 0; i < op.srcs.size(); ++i) {
      r_.operands.push_back(operand(op, op.srcs[i], isPacketOperand(op, false, i), packetOp));
    }
    for (size_t i = 0; i < op.dsts.size(); ++i) {
      r_.operands.push_back(operand(op, op.dsts[i], isPacketOperand(op, true, i), packetOp));
    }
    r_.indices.insert(r_.indices.end(), op.indices.begin(), op.indices.end());
    if (op.type == OpType::Barrier) {
      d.arg0 = op.barrierId;
      d.arg1 = op.barrierBlocks;
      r_.nSyncers = std::max(r_.nSyncers, op.barrierId + 1);
    } else if (op.type == OpType::Pipeline) {
      d.arg0 = static_cast<uint32_t>(op.inner.size());
      d.unitSize = op.unitSize;
      const uint64_t bytes = uint64_t(op.pipelineChunks) * r_.chunkSize;
      d.nIterations = (bytes + op.unitSize - 1) / op.unitSize;
    }
    r_.ops.push_back(d);
  }

  const PlanImpl& plan_;
  uint64_t inputSize_;
  uint64_t outputSize_;
  PacketType packetType_;
  uint64_t payload_ = 8;
  std::string place_;
  const DeviceBlock* block_ = nullptr;  // the block whose operations are being added
  ResolvedPlan r_;
};

}  // namespace

ResolvedPlan ExecutionPlan::Impl::resolve(uint64_t inputSize, uint64_t outputSize, PacketType packetType) const {
  return Resolver(*this, inputSize, outputSize, packetType).run();
}

}  // namespace mscclpp
