// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What the interpreter kernel reads: a plan resolved for one set of buffer sizes, as flat arrays in
// device memory. Shared by the host code that builds it and the kernel that runs it, so it holds only
// plain data and public device handles.

#ifndef MSCCLPP_EXT_EXECUTOR_DEVICE_PLAN_HPP_
#define MSCCLPP_EXT_EXECUTOR_DEVICE_PLAN_HPP_

#include <cstdint>
#include <mscclpp/concurrency_device.hpp>
#include <mscclpp/memory_channel_device.hpp>
#include <mscclpp/port_channel_device.hpp>

namespace mscclpp::executor {

enum class BufferType : uint8_t { Input = 0, Output = 1, Scratch = 2 };

enum class ChannelType : uint8_t { None = 0, Memory = 1, Port = 2 };

enum class OpType : uint8_t {
  Nop,
  Barrier,
  Put,
  PutPackets,
  ReadPutPackets,
  PutWithSignal,
  PutWithSignalAndFlush,
  Get,
  Copy,
  CopyPackets,
  UnpackPackets,
  Signal,
  Wait,
  Flush,
  Reduce,
  ReducePackets,
  ReduceCopyPackets,
  ReduceSend,
  ReduceSendPackets,
  ReduceCopySendPackets,
  ReadReduce,
  ReadReduceSend,
  RelaxedSignal,
  RelaxedWait,
  Pipeline,
  SemRelease,
  SemAcquire,
};

/// A byte range of a buffer: a local one (input, output, scratch) or a peer's (index `ref` into the
/// context's remote buffer tables). For packet data in scratch, `offset` is the payload offset; the
/// packets sit at twice that (both packet formats are twice the size of their payload).
struct DeviceOperand {
  uint64_t offset;
  uint64_t size;
  uint32_t ref;
  uint8_t buffer;  // BufferType of the local or remote buffer
  uint8_t remote;
  uint8_t reserved[2];
};

/// One operation. Inputs then outputs sit at operands[first, first + nInputs + nOutputs); channel or
/// semaphore indices (context-wide) at indices[firstIndex, firstIndex + nIndices).
struct DeviceOp {
  uint8_t type;         // OpType
  uint8_t channelType;  // ChannelType
  uint16_t nInputs;
  uint16_t nOutputs;
  uint16_t reserved;
  uint32_t nIndices;
  uint32_t firstOperand;
  uint32_t firstIndex;
  uint32_t arg0;  // barrier: syncer index; pipeline: number of the operations that follow and repeat
  uint32_t arg1;  // barrier: number of thread blocks
  uint32_t reserved2;
  uint64_t unitSize;     // pipeline: bytes per iteration
  uint64_t nIterations;  // pipeline
};

struct DeviceBlock {
  uint32_t firstOp;
  uint32_t nOps;
};

/// Everything one launch needs, passed by value as the kernel's argument.
struct DeviceContext {
  const DeviceBlock* blocks;
  const DeviceOp* ops;
  const DeviceOperand* operands;
  const uint32_t* indices;
  BaseMemoryChannelDeviceHandle* memoryChannels;
  BasePortChannelDeviceHandle* portChannels;
  void* const* remotePtrs;    // per remote buffer: its mapping here (memory-channel access), or null
  const MemoryId* remoteIds;  // per remote buffer: its proxy memory id (port-channel access)
  DeviceSyncer* syncers;
  DeviceSemaphore* semaphores;
  uint32_t* epochs;  // per thread block: executions so far, the packet flag of the next one
  char* scratch;
  uint64_t scratchHalf;  // double scratch: the byte offset of the second half; 0 otherwise
  MemoryId localIdBase;  // proxy ids of the local input, output, scratch: base + BufferType
  uint8_t dataType;      // DataType
  uint8_t packetType;    // PacketType
};

/// Launches the interpreter: one block per plan thread block.
void launchInterpreter(const DeviceContext& ctx, void* input, void* output, int nBlocks, int nThreads,
                       cudaStream_t stream);

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_DEVICE_PLAN_HPP_
