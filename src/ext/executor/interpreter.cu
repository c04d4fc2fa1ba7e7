// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The interpreter kernel and its launch. Block b copies its table (device_plan.hpp) into shared memory,
// then runs thread block b's operations of the resolved plan, in order, all its threads together. As in
// the reference, operations do not wait for one another inside a block: a plan puts a "nop"
// (__syncthreads) where the threads of an operation must all be done before the next begins (e.g.
// between a wait and the reads it guards). One kernel per data type and packet type, so that the inner
// loops of the reductions and packet operations are compiled for exactly one of each, and one per data
// type for plans without packet operations, compiled for fewer threads (device_plan.hpp says why).

#include <mscclpp/device.hpp>
#include <mscclpp/executor.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <type_traits>

#include "common/checks.hpp"
#include "ext/common/dependent_launch.hpp"
#include "ext/executor/device_plan.hpp"
#include "ext/executor/interpreter_ops.hpp"
#include "ext/executor/plan_error.hpp"

namespace mscclpp::executor {

namespace {

// The kernel is a programmatic dependent launch where the GPU has them (ext/common/dependent_launch.hpp):
// with it, MSCCL++'s allreduce.json at 1 MiB went from 1.02x MSCCL++'s executor to 0.99x
// (docs/performance.md, 2026-12-06, second section).
using ext::waitForPriorKernels;

/// The packet type of the kernels for plans without packet operations (the parser refuses a packet
/// operation in a plan whose protocol is not LL): their packet cases compile to nothing, which leaves
/// the registers to the rest, and one kernel per data type serves both packet types.
struct NoPackets {};

template <typename P>
constexpr bool kHasPackets = !std::is_same_v<P, NoPackets>;

template <typename P>
constexpr uint32_t kMaxThreads = interpreterThreadLimit(kHasPackets<P>);

template <typename T, typename P>
__device__ void runOp(const Block& b, const DeviceOp& op, uint64_t off, uint64_t unit) {
  const DeviceOperand* o = b.operands + op.firstOperand;
  switch (OpType(op.type)) {
    case OpType::Nop:
      __syncthreads();
      break;
    case OpType::Barrier:
      b.syncers[op.arg0].sync(op.arg1, kSpinLimit);
      break;
    case OpType::Put:
    case OpType::PutWithSignal:
    case OpType::PutWithSignalAndFlush:
      runPut(b, op, o, off, unit);
      break;
    case OpType::Get:
    case OpType::Copy:
      runGetOrCopy(b, op, o, off, unit);
      break;
    case OpType::Signal:
    case OpType::Wait:
    case OpType::Flush:
    case OpType::RelaxedSignal:
    case OpType::RelaxedWait:
      runSignalWait(b, op);
      break;
    case OpType::Reduce:
    case OpType::ReduceSend:
    case OpType::ReadReduce:
    case OpType::ReadReduceSend:
      runReduce<T>(b, op, o, off, unit);
      break;
    case OpType::PutPackets:
      if constexpr (kHasPackets<P>) runPutPackets<P>(b, op, o, off, unit);
      break;
    case OpType::ReadPutPackets:
      if constexpr (kHasPackets<P>) runReadPutPackets<P>(b, op, o, off, unit);
      break;
    case OpType::CopyPackets:
    case OpType::UnpackPackets:
      if constexpr (kHasPackets<P>) runCopyPackets<P>(b, op, o, off, unit);
      break;
    case OpType::ReducePackets:
    case OpType::ReduceCopyPackets:
    case OpType::ReduceSendPackets:
    case OpType::ReduceCopySendPackets:
      if constexpr (kHasPackets<P>) runReducePackets<T, P>(b, op, o, off, unit);
      break;
    case OpType::SemAcquire:
    case OpType::SemRelease:
      runSemaphore(b, op);
      break;
    case OpType::Pipeline:
      break;
  }
}

template <typename T, typename P>
__global__ void __launch_bounds__(kMaxThreads<P>, 1) interpreterKernel(DeviceContext ctx) {
  extern __shared__ uint4 table[];
  __shared__ uint32_t flag;
  // Before anything that earlier work on the stream may write: the epochs, the buffers.
  waitForPriorKernels();
  // Thread 0 loads the block's epoch before its part of the table, so that the two loads overlap: loaded
  // after the copy loop, the epoch would add a second memory round trip before the first operation.
  const uint32_t epoch = threadIdx.x == 0 ? ctx.epochs[blockIdx.x] : 0;
  // One coalesced copy of the whole table: afterwards every decode is a shared-memory read.
  const uint4* mine = reinterpret_cast<const uint4*>(ctx.tables + uint64_t(blockIdx.x) * ctx.tableBytes);
  for (uint32_t i = threadIdx.x; i < ctx.tableBytes / 16; i += blockDim.x) table[i] = mine[i];
  if (threadIdx.x == 0) {
    flag = epoch + 1;
    ctx.epochs[blockIdx.x] = epoch + 1;
  }
  __syncthreads();
  const char* base = reinterpret_cast<const char*>(table);
  const DeviceTableHead& head = *reinterpret_cast<const DeviceTableHead*>(base);
  // Double scratch: consecutive executions alternate halves, so packets of the next one never land in
  // the half a slower peer is still reading.
  const uint64_t half = (ctx.scratchHalf != 0 && (flag & 1) == 0) ? ctx.scratchHalf : 0;
  char* shared = reinterpret_cast<char*>(table);
  const Block b{reinterpret_cast<const DeviceOperand*>(base + head.operandsAt),
                reinterpret_cast<const uint32_t*>(base + head.indicesAt),
                reinterpret_cast<BaseMemoryChannelDeviceHandle*>(shared + head.memoryChannelsAt),
                reinterpret_cast<BasePortChannelDeviceHandle*>(shared + head.portChannelsAt),
                ctx.syncers,
                ctx.semaphores,
                half,
                flag};
  const DeviceOp* ops = reinterpret_cast<const DeviceOp*>(base + head.opsAt);
  const uint32_t nOps = head.nOps;
  for (uint32_t i = 0; i < nOps; ++i) {
    const DeviceOp& op = ops[i];
    if (OpType(op.type) != OpType::Pipeline) {
      runOp<T, P>(b, op, 0, kNoUnit);
      continue;
    }
    for (uint64_t it = 0; it < op.nIterations; ++it) {
      for (uint32_t k = 1; k <= op.arg0; ++k) runOp<T, P>(b, ops[i + k], it * op.unitSize, op.unitSize);
    }
    i += op.arg0;
  }
}

using InterpreterKernel = void (*)(DeviceContext);

/// The kernel for element type T, `packetType` and the plan kind.
template <typename T>
InterpreterKernel kernelFor(PacketType packetType, bool packetPlan) {
  if (!packetPlan) return &interpreterKernel<T, NoPackets>;
  switch (packetType) {
    case PacketType::LL8:
      return &interpreterKernel<T, LL8Packet>;
    case PacketType::LL16:
      return &interpreterKernel<T, LL16Packet>;
  }
  return nullptr;
}

/// The kernel for `dataType`, `packetType` and the plan kind; null for a combination Executor::execute
/// refuses.
InterpreterKernel kernelFor(DataType dataType, PacketType packetType, bool packetPlan) {
  switch (dataType) {
    case DataType::INT32:
      return kernelFor<int32_t>(packetType, packetPlan);
    case DataType::UINT32:
      return kernelFor<uint32_t>(packetType, packetPlan);
    case DataType::FLOAT16:
      return kernelFor<__half>(packetType, packetPlan);
    case DataType::FLOAT32:
      return kernelFor<float>(packetType, packetPlan);
    case DataType::BFLOAT16:
      return kernelFor<__bfloat16>(packetType, packetPlan);
    case DataType::FP8_E4M3:
#if defined(__FP8_TYPES_EXIST__)
      return kernelFor<__fp8_e4m3>(packetType, packetPlan);
#else
      return nullptr;
#endif
    case DataType::FP8_E5M2:
#if defined(__FP8_TYPES_EXIST__)
      return kernelFor<__fp8_e5m2>(packetType, packetPlan);
#else
      return nullptr;
#endif
  }
  return nullptr;
}

}  // namespace

bool interpreterLaunchesDependent() {
  // Every interpreter kernel is built for the same architectures; one stands for all.
  return ext::launchesDependent(reinterpret_cast<const void*>(&interpreterKernel<float, NoPackets>));
}

void launchInterpreter(const DeviceContext& ctx, bool dependent, cudaStream_t stream) {
  const InterpreterKernel kernel =
      kernelFor(static_cast<DataType>(ctx.dataType), static_cast<PacketType>(ctx.packetType), ctx.packetPlan);
  MSCCLPP_ASSERT(kernel != nullptr, "no interpreter kernel for this data type and packet type");
  MSCCLPP_ASSERT(ctx.nThreads <= interpreterThreadLimit(ctx.packetPlan),
                 "more interpreter threads than the kernel is compiled for");
  ext::launchKernel(kernel, dim3(ctx.nBlocks), dim3(ctx.nThreads), ctx.tableBytes, stream, dependent, ctx);
}

void reserveInterpreterSharedMemory(uint32_t bytes, const Where& where) {
  // The kernel's own shared variable (the flag) comes on top of the table; up to 48 KiB in all, every
  // kernel may take without asking.
  constexpr uint32_t kStaticBytes = 16;
  if (bytes + kStaticBytes <= 48 * 1024) return;
  int device = 0, optIn = 0;
  MSCCLPP_CUDATHROW(cudaGetDevice(&device));
  MSCCLPP_CUDATHROW(cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes + kStaticBytes > static_cast<uint32_t>(optIn)) {
    where.fail(concat("the operations of one thread block need ", bytes,
                      " bytes of shared memory, more than the GPU's ", optIn));
  }
  for (DataType t : {DataType::INT32, DataType::UINT32, DataType::FLOAT16, DataType::FLOAT32, DataType::BFLOAT16,
                     DataType::FP8_E4M3, DataType::FP8_E5M2}) {
    for (PacketType p : {PacketType::LL8, PacketType::LL16}) {
      for (bool packetPlan : {false, true}) {
        const InterpreterKernel kernel = kernelFor(t, p, packetPlan);
        if (kernel != nullptr) {
          MSCCLPP_CUDATHROW(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
        }
      }
    }
  }
}

}  // namespace mscclpp::executor
