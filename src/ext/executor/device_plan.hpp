// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What the interpreter kernel reads: a plan resolved for one set of buffer sizes, as one table per
// thread block in device memory. Shared by the host code that builds it and the kernel that runs it, so
// it holds only plain data and public device handles.

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

/// A byte range of a buffer: a local one (input, output, scratch) or a peer's (remote buffer `ref` of
/// this GPU). The resolver fills the offsets; the executor adds the addresses and proxy ids of one
/// context (bindAddresses), so that the kernel never looks a buffer up. A scratch range is given in
/// the first half of a double scratch: the kernel adds the half in use.
struct DeviceOperand {
  char* ptr;        // the first byte as this GPU maps it; null where only the proxy reaches the buffer
  uint64_t offset;  // the first byte within its buffer (packets: twice the payload offset)
  uint64_t size;    // payload bytes
  uint32_t id;      // the buffer's proxy memory id (port channels)
  uint32_t ref;     // for a remote range: the index of the peer's buffer among this GPU's remote buffers
  uint8_t buffer;   // BufferType of the local or remote buffer
  uint8_t remote;
  uint8_t packets;  // the range holds packets: pipeline steps move twice their payload offset
  uint8_t reserved[5];
};

/// One operation. Inputs then outputs sit at operands[first, first + nInputs + nOutputs) of its block;
/// channel or semaphore indices (context-wide) at indices[firstIndex, firstIndex + nIndices).
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

/// Where thread block b's operations sit among the resolution's arrays.
struct DeviceBlock {
  uint32_t firstOp;
  uint32_t nOps;
  uint32_t firstOperand;
  uint32_t nOperands;
  uint32_t firstIndex;
  uint32_t nIndices;
};

/// The head of one block's table. A block's table is everything it reads to decode its operations,
/// copied whole into shared memory when the block starts: this head, its ops, its operands (indexed
/// from the block's first), its channel and semaphore indices, and the context's channel handles.
/// Each part starts at a 16-byte boundary, at the byte offsets below from the table's start.
struct DeviceTableHead {
  uint32_t nOps;
  uint32_t opsAt;
  uint32_t operandsAt;
  uint32_t indicesAt;
  uint32_t memoryChannelsAt;
  uint32_t portChannelsAt;
  uint32_t reserved[2];
};

/// Everything one launch needs, passed by value as the kernel's argument. The tables of all blocks
/// sit one after another, `tableBytes` apart.
struct DeviceContext {
  const char* tables;
  uint32_t tableBytes;  // a multiple of 16
  uint32_t nBlocks;
  uint32_t nThreads;
  uint8_t dataType;    // DataType
  uint8_t packetType;  // PacketType
  bool packetPlan;     // the plan's protocol is LL: the kernel bound to kPacketPlanThreads
  DeviceSyncer* syncers;
  DeviceSemaphore* semaphores;
  uint32_t* epochs;      // per thread block: executions so far, the packet flag of the next one
  uint64_t scratchHalf;  // double scratch: the byte offset of the second half; 0 otherwise
};

/// Threads per interpreter block, by plan kind. Every operation spreads its work over blockDim.x, so
/// the count changes only how the work is split, and the kernel is compiled for the most it may get.
/// A plan without packet operations runs on min(its num_threads_per_block, kSimplePlanThreads): with
/// 1024 threads a thread has 64 registers, too few for the interpreter's state beside a reduction's
/// words, and the compiler then keeps the operation loop's position in local memory and reloads it at
/// every operation (a round trip of ~400 cycles); with 512 it has 128 registers and spills nothing. A
/// packet plan keeps its own count, up to 1024: a packet operation waits on one packet per thread, so
/// it needs every thread in flight more than it loses to the reloads.
constexpr uint32_t kSimplePlanThreads = 512;
constexpr uint32_t kPacketPlanThreads = 1024;

/// The most threads per block the interpreter kernel of a plan kind is compiled for.
constexpr uint32_t interpreterThreadLimit(bool packetPlan) {
  return packetPlan ? kPacketPlanThreads : kSimplePlanThreads;
}

/// The threads per interpreter block of a plan with `planThreads` (its num_threads_per_block) threads
/// per block, whose protocol is LL (`packetPlan`) or not.
inline uint32_t interpreterThreads(int planThreads, bool packetPlan) {
  const uint32_t most = interpreterThreadLimit(packetPlan);
  return static_cast<uint32_t>(planThreads) < most ? static_cast<uint32_t>(planThreads) : most;
}

/// Whether the interpreter kernels may be launched as programmatic dependent launches on the current GPU
/// (ext/common/dependent_launch.hpp says how and why).
bool interpreterLaunchesDependent();

/// Launches the interpreter: one block per plan thread block, the kernel picked by data type, packet
/// type and plan kind; dependent on the kernel before it when `dependent`.
void launchInterpreter(const DeviceContext& ctx, bool dependent, cudaStream_t stream);

struct Where;

/// Lets the interpreter use `bytes` of shared memory for a block's table (before any capture);
/// Error(ExecutorError) at `where` when the GPU has less.
void reserveInterpreterSharedMemory(uint32_t bytes, const Where& where);

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_DEVICE_PLAN_HPP_
