// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The interpreter: block b runs thread block b's operations of the resolved plan, in order, all its
// threads together. As in the reference, operations do not wait for one another inside a block: a
// plan puts a "nop" (__syncthreads) where the threads of an operation must all be done before the next
// begins (e.g. between a wait and the reads it guards). Every range was checked on the host
// (resolve.cc), so nothing here checks bounds.

#include <mscclpp/concurrency_device.hpp>
#include <mscclpp/copy_device.hpp>
#include <mscclpp/executor.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/packet_device.hpp>

#include "ext/executor/device_plan.hpp"

namespace mscclpp::executor {

namespace {

// How long a wait spins before it traps and ends the kernel: long enough for a peer that starts
// seconds late, short enough that a broken plan fails instead of hanging.
constexpr int64_t kSpinLimit = 1ll << 27;
constexpr uint64_t kNoUnit = UINT64_MAX;
// Operands per side held in registers by the reductions (checked on the host).
constexpr int kMaxReduceOperands = 32;

// ---- element-wise sums of 32-bit words holding 4 / sizeof(T) elements ----

template <typename T>
struct WordAdd;

template <>
struct WordAdd<float> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    return __float_as_uint(__uint_as_float(a) + __uint_as_float(b));
  }
};

template <>
struct WordAdd<int32_t> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    return static_cast<uint32_t>(static_cast<int32_t>(a) + static_cast<int32_t>(b));
  }
};

template <>
struct WordAdd<uint32_t> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return a + b; }
};

template <>
struct WordAdd<__half> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    __half2 x = *reinterpret_cast<__half2*>(&a), y = *reinterpret_cast<__half2*>(&b);
    __half2 z = __hadd2(x, y);
    return *reinterpret_cast<uint32_t*>(&z);
  }
};

template <>
struct WordAdd<__bfloat16> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {
    __bfloat162 x = *reinterpret_cast<__bfloat162*>(&a), y = *reinterpret_cast<__bfloat162*>(&b);
    __bfloat162 z = __hadd2(x, y);
    return *reinterpret_cast<uint32_t*>(&z);
  }
};

#if defined(__FP8_TYPES_EXIST__) && defined(MSCCLPP_DEVICE_CUDA)
// FP8: each half of the word is two elements, added as half2 and rounded back (saturating).
template <__nv_fp8_interpretation_t Kind>
__device__ __forceinline__ uint32_t addFp8Word(uint32_t a, uint32_t b) {
  uint32_t out = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const __nv_fp8x2_storage_t x = static_cast<__nv_fp8x2_storage_t>(a >> (16 * h));
    const __nv_fp8x2_storage_t y = static_cast<__nv_fp8x2_storage_t>(b >> (16 * h));
    __half2 hx = __half2(__nv_cvt_fp8x2_to_halfraw2(x, Kind));
    __half2 hy = __half2(__nv_cvt_fp8x2_to_halfraw2(y, Kind));
    const __nv_fp8x2_storage_t z = __nv_cvt_halfraw2_to_fp8x2(__half2_raw(__hadd2(hx, hy)), __NV_SATFINITE, Kind);
    out |= static_cast<uint32_t>(z) << (16 * h);
  }
  return out;
}

template <>
struct WordAdd<__fp8_e4m3> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__NV_E4M3>(a, b); }
};

template <>
struct WordAdd<__fp8_e5m2> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__NV_E5M2>(a, b); }
};
#elif defined(__FP8_TYPES_EXIST__)
// HIP's FP8 types have no pair conversions: each of the four elements goes through float.
template <typename T>
__device__ __forceinline__ uint32_t addFp8Word(uint32_t a, uint32_t b) {
  uint32_t out = 0;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    T x, y;
    const uint8_t xb = static_cast<uint8_t>(a >> (8 * e)), yb = static_cast<uint8_t>(b >> (8 * e));
    memcpy(&x, &xb, 1);
    memcpy(&y, &yb, 1);
    const T z(static_cast<float>(x) + static_cast<float>(y));
    uint8_t zb;
    memcpy(&zb, &z, 1);
    out |= static_cast<uint32_t>(zb) << (8 * e);
  }
  return out;
}

template <>
struct WordAdd<__fp8_e4m3> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__fp8_e4m3>(a, b); }
};

template <>
struct WordAdd<__fp8_e5m2> {
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) { return addFp8Word<__fp8_e5m2>(a, b); }
};
#endif

template <typename T>
__device__ __forceinline__ uint4 add4(uint4 a, uint4 b) {
  return make_uint4(WordAdd<T>::add(a.x, b.x), WordAdd<T>::add(a.y, b.y), WordAdd<T>::add(a.z, b.z),
                    WordAdd<T>::add(a.w, b.w));
}

template <typename T>
__device__ __forceinline__ uint2 addPayload(uint2 a, uint2 b) {
  return make_uint2(WordAdd<T>::add(a.x, b.x), WordAdd<T>::add(a.y, b.y));
}

template <typename T>
__device__ __forceinline__ uint32_t addPayload(uint32_t a, uint32_t b) {
  return WordAdd<T>::add(a, b);
}

/// Calls fn(T{}) with the element type of `dataType`.
template <typename Fn>
__device__ __forceinline__ void withType(uint8_t dataType, Fn&& fn) {
  switch (static_cast<DataType>(dataType)) {
    case DataType::INT32:
      fn(int32_t{});
      break;
    case DataType::UINT32:
      fn(uint32_t{});
      break;
    case DataType::FLOAT16:
      fn(__half{});
      break;
    case DataType::FLOAT32:
      fn(float{});
      break;
    case DataType::BFLOAT16:
      fn(__bfloat16{});
      break;
#if defined(__FP8_TYPES_EXIST__)
    case DataType::FP8_E4M3:
      fn(__fp8_e4m3{});
      break;
    case DataType::FP8_E5M2:
      fn(__fp8_e5m2{});
      break;
#else
    // Refused by Executor::execute where the toolkit has no FP8 types.
    case DataType::FP8_E4M3:
    case DataType::FP8_E5M2:
      break;
#endif
  }
}

/// The state of one block while it runs: the buffers, the epoch flag and the scratch half in use.
struct Block {
  const DeviceContext& ctx;
  char* input;
  char* output;
  char* scratch;  // the half in use
  uint64_t half;  // its offset in the scratch allocation (peers' scratch too)
  uint32_t flag;

  __device__ char* local(const DeviceOperand& o) const {
    char* base = o.buffer == uint8_t(BufferType::Input)    ? input
                 : o.buffer == uint8_t(BufferType::Output) ? output
                                                           : scratch;
    return base + o.offset;
  }
  __device__ char* remote(const DeviceOperand& o) const {
    char* base = static_cast<char*>(ctx.remotePtrs[o.ref]);
    return base + (o.buffer == uint8_t(BufferType::Scratch) ? half : 0) + o.offset;
  }
  __device__ char* data(const DeviceOperand& o) const { return o.remote ? remote(o) : local(o); }
  /// Packets of the payload range of `o` (twice the offset, in the scratch half in use).
  __device__ char* localPackets(const DeviceOperand& o) const { return scratch + 2 * o.offset; }
  __device__ char* remotePackets(const DeviceOperand& o) const {
    return static_cast<char*>(ctx.remotePtrs[o.ref]) + half + 2 * o.offset;
  }
  /// Offset of `o` in the proxy's memory (local or remote), data or packets.
  __device__ uint64_t proxyOffset(const DeviceOperand& o, bool packets) const {
    return (o.buffer == uint8_t(BufferType::Scratch) ? half : 0) + (packets ? 2 * o.offset : o.offset);
  }
};

__device__ __forceinline__ uint64_t sizeAt(const DeviceOperand& o, uint64_t off, uint64_t unit) {
  return o.size > off ? min(o.size - off, unit) : 0;
}

/// copy() with the widest element the two addresses allow.
__device__ __forceinline__ void copyBytes(char* dst, char* src, uint64_t bytes) {
  const uintptr_t mis = reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src);
  if ((mis & 15) == 0) {
    copy<16>(dst, src, bytes, threadIdx.x, blockDim.x);
  } else if ((mis & 7) == 0) {
    copy<8>(dst, src, bytes, threadIdx.x, blockDim.x);
  } else {
    copy<4>(dst, src, bytes, threadIdx.x, blockDim.x);
  }
}

// ---- data movement ----

__device__ void runPut(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const OpType type = OpType(op.type);
  const DeviceOperand* src = o;
  const DeviceOperand* dst = o + op.nInputs;
  if (op.channelType == uint8_t(ChannelType::Memory)) {
    for (uint32_t i = 0; i < op.nOutputs; ++i) {
      const uint64_t n = sizeAt(src[i], off, unit);
      if (n > 0) copyBytes(b.remote(dst[i]) + off, b.local(src[i]) + off, n);
    }
    if (type != OpType::Put) {
      __syncthreads();
      for (uint32_t i = threadIdx.x; i < op.nIndices; i += blockDim.x) {
        b.ctx.memoryChannels[b.ctx.indices[op.firstIndex + i]].signal();
      }
    }
    return;
  }
  // The proxy reads what the other threads wrote before: they must be done.
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < op.nOutputs; i += blockDim.x) {
    const uint64_t n = sizeAt(src[i], off, unit);
    BasePortChannelDeviceHandle& ch = b.ctx.portChannels[b.ctx.indices[op.firstIndex + i]];
    const MemoryId dstId = b.ctx.remoteIds[dst[i].ref];
    const MemoryId srcId = b.ctx.localIdBase + src[i].buffer;
    const uint64_t dstOff = b.proxyOffset(dst[i], false) + off, srcOff = b.proxyOffset(src[i], false) + off;
    if (type == OpType::Put) {
      if (n > 0) ch.put(dstId, dstOff, srcId, srcOff, n);
    } else if (type == OpType::PutWithSignal) {
      if (n > 0) {
        ch.putWithSignal(dstId, dstOff, srcId, srcOff, n);
      } else {
        ch.signal();
      }
    } else if (n > 0) {
      ch.putWithSignalAndFlush(dstId, dstOff, srcId, srcOff, n, kSpinLimit);
    } else {
      ch.signal();
      ch.flush(kSpinLimit);
    }
  }
}

__device__ void runGetOrCopy(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const DeviceOperand* src = o;
  const DeviceOperand* dst = o + op.nInputs;
  for (uint32_t i = 0; i < op.nOutputs; ++i) {
    const uint64_t n = sizeAt(src[i], off, unit);
    if (n > 0) copyBytes(b.data(dst[i]) + off, b.data(src[i]) + off, n);
  }
}

__device__ void runSignalWait(const Block& b, const DeviceOp& op) {
  const OpType type = OpType(op.type);
  for (uint32_t i = threadIdx.x; i < op.nIndices; i += blockDim.x) {
    const uint32_t c = b.ctx.indices[op.firstIndex + i];
    if (op.channelType == uint8_t(ChannelType::Memory)) {
      BaseMemoryChannelDeviceHandle& ch = b.ctx.memoryChannels[c];
      switch (type) {
        case OpType::Signal:
          ch.signal();
          break;
        case OpType::RelaxedSignal:
          ch.relaxedSignal();
          break;
        case OpType::Wait:
          ch.wait(kSpinLimit);
          break;
        default:
          ch.relaxedWait(kSpinLimit);
          break;
      }
    } else {
      BasePortChannelDeviceHandle& ch = b.ctx.portChannels[c];
      switch (type) {
        case OpType::Signal:
        case OpType::RelaxedSignal:
          ch.signal();
          break;
        case OpType::Flush:
          ch.flush(kSpinLimit);
          break;
        default:
          ch.wait(kSpinLimit);
          break;
      }
    }
  }
}

// ---- reductions of plain data: dst0 = src0 + src1 + ..., also written to dsts 1.. when sending ----

template <typename T>
__device__ void reduceData(char* const* in, int nIn, char* const* out, int nOut, uint64_t bytes) {
  bool aligned = true;
  for (int k = 0; k < nIn; ++k) aligned &= (reinterpret_cast<uintptr_t>(in[k]) & 15) == 0;
  for (int k = 0; k < nOut; ++k) aligned &= (reinterpret_cast<uintptr_t>(out[k]) & 15) == 0;
  const uint64_t n16 = aligned ? bytes / 16 : 0;
  for (uint64_t i = threadIdx.x; i < n16; i += blockDim.x) {
    uint4 acc = reinterpret_cast<const uint4*>(in[0])[i];
    for (int k = 1; k < nIn; ++k) acc = add4<T>(acc, reinterpret_cast<const uint4*>(in[k])[i]);
    for (int k = 0; k < nOut; ++k) reinterpret_cast<uint4*>(out[k])[i] = acc;
  }
  const uint64_t nWords = bytes / 4;
  for (uint64_t i = n16 * 4 + threadIdx.x; i < nWords; i += blockDim.x) {
    uint32_t acc = reinterpret_cast<const uint32_t*>(in[0])[i];
    for (int k = 1; k < nIn; ++k) acc = WordAdd<T>::add(acc, reinterpret_cast<const uint32_t*>(in[k])[i]);
    for (int k = 0; k < nOut; ++k) reinterpret_cast<uint32_t*>(out[k])[i] = acc;
  }
}

__device__ void runReduce(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const uint64_t n = sizeAt(o[0], off, unit);
  if (n == 0) return;
  char* in[kMaxReduceOperands];
  char* out[kMaxReduceOperands];
  for (int k = 0; k < op.nInputs; ++k) in[k] = b.data(o[k]) + off;
  for (int k = 0; k < op.nOutputs; ++k) out[k] = b.data(o[op.nInputs + k]) + off;
  withType(b.ctx.dataType, [&](auto t) { reduceData<decltype(t)>(in, op.nInputs, out, op.nOutputs, n); });
}

// ---- packets ----

template <typename P>
__device__ void runPutPackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const DeviceOperand* src = o;
  const DeviceOperand* dst = o + op.nInputs;
  if (op.channelType == uint8_t(ChannelType::Memory)) {
    for (uint32_t i = 0; i < op.nOutputs; ++i) {
      const uint64_t n = sizeAt(src[i], off, unit);
      if (n > 0) {
        copyToPackets<P>(b.remotePackets(dst[i]) + 2 * off, b.local(src[i]) + off, n, threadIdx.x, blockDim.x, b.flag);
      }
    }
    return;
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < op.nOutputs; i += blockDim.x) {
    const uint64_t n = sizeAt(src[i], off, unit);
    if (n == 0) continue;
    b.ctx.portChannels[b.ctx.indices[op.firstIndex + i]].put(
        b.ctx.remoteIds[dst[i].ref], b.proxyOffset(dst[i], true) + 2 * off, b.ctx.localIdBase + src[i].buffer,
        b.proxyOffset(src[i], true) + 2 * off, 2 * n);
  }
}

template <typename P>
__device__ void runReadPutPackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off,
                                  uint64_t unit) {
  using Payload = typename P::Payload;
  const DeviceOperand* src = o;
  const DeviceOperand* dst = o + op.nInputs;
  const bool memory = op.channelType == uint8_t(ChannelType::Memory);
  for (uint32_t i = 0; i < op.nOutputs; ++i) {
    const uint64_t n = sizeAt(src[i], off, unit);
    const P* in = reinterpret_cast<const P*>(b.localPackets(src[i]) + 2 * off);
    P* out = memory ? reinterpret_cast<P*>(b.remotePackets(dst[i]) + 2 * off) : nullptr;
    for (uint64_t k = threadIdx.x; k < n / sizeof(Payload); k += blockDim.x) {
      const Payload v = in[k].read(b.flag, kSpinLimit);
      if (memory) out[k].write(v, b.flag);
    }
  }
  if (memory) return;
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < op.nOutputs; i += blockDim.x) {
    const uint64_t n = sizeAt(src[i], off, unit);
    if (n == 0) continue;
    b.ctx.portChannels[b.ctx.indices[op.firstIndex + i]].put(
        b.ctx.remoteIds[dst[i].ref], b.proxyOffset(dst[i], true) + 2 * off,
        b.ctx.localIdBase + uint32_t(BufferType::Scratch), b.proxyOffset(src[i], true) + 2 * off, 2 * n);
  }
}

template <typename P>
__device__ void runCopyPackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off,
                               uint64_t unit) {
  const uint64_t n = sizeAt(o[0], off, unit);
  if (n == 0) return;
  if (OpType(op.type) == OpType::CopyPackets) {
    copyToPackets<P>(b.localPackets(o[1]) + 2 * off, b.local(o[0]) + off, n, threadIdx.x, blockDim.x, b.flag);
  } else {
    copyFromPackets<P>(b.local(o[1]) + off, b.localPackets(o[0]) + 2 * off, n, threadIdx.x, blockDim.x, b.flag,
                       kSpinLimit);
  }
}

/// repkt / respkt / recpkt / recspkt: dst0 = src0 + the packets of srcs 1..; recpkt and recspkt also
/// write the sum as packets to dst1 (local scratch); respkt and recspkt send it as packets to the
/// remaining dsts (peers' scratch).
template <typename T, typename P>
__device__ void reducePackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  using Payload = typename P::Payload;
  const OpType type = OpType(op.type);
  const uint64_t n = sizeAt(o[0], off, unit);
  if (n == 0) return;
  const DeviceOperand* dst = o + op.nInputs;
  const bool localCopy = type == OpType::ReduceCopyPackets || type == OpType::ReduceCopySendPackets;
  const int firstRemote = localCopy ? 2 : 1;
  const Payload* src0 = reinterpret_cast<const Payload*>(b.local(o[0]) + off);
  Payload* dst0 = reinterpret_cast<Payload*>(b.local(dst[0]) + off);
  const P* in[kMaxReduceOperands];
  P* out[kMaxReduceOperands];
  for (int k = 1; k < op.nInputs; ++k) in[k] = reinterpret_cast<const P*>(b.localPackets(o[k]) + 2 * off);
  int nOut = 0;
  if (localCopy) out[nOut++] = reinterpret_cast<P*>(b.localPackets(dst[1]) + 2 * off);
  for (int k = firstRemote; k < op.nOutputs; ++k) out[nOut++] = reinterpret_cast<P*>(b.remotePackets(dst[k]) + 2 * off);
  for (uint64_t i = threadIdx.x; i < n / sizeof(Payload); i += blockDim.x) {
    Payload acc = src0[i];
    for (int k = 1; k < op.nInputs; ++k) acc = addPayload<T>(acc, in[k][i].read(b.flag, kSpinLimit));
    dst0[i] = acc;
    for (int k = 0; k < nOut; ++k) out[k][i].write(acc, b.flag);
  }
}

template <typename P>
__device__ void runPacketOp(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  switch (OpType(op.type)) {
    case OpType::PutPackets:
      runPutPackets<P>(b, op, o, off, unit);
      break;
    case OpType::ReadPutPackets:
      runReadPutPackets<P>(b, op, o, off, unit);
      break;
    case OpType::CopyPackets:
    case OpType::UnpackPackets:
      runCopyPackets<P>(b, op, o, off, unit);
      break;
    default:
      withType(b.ctx.dataType, [&](auto t) { reducePackets<decltype(t), P>(b, op, o, off, unit); });
      break;
  }
}

__device__ void runOp(const Block& b, const DeviceOp& op, uint64_t off, uint64_t unit) {
  const DeviceOperand* o = b.ctx.operands + op.firstOperand;
  switch (OpType(op.type)) {
    case OpType::Nop:
      __syncthreads();
      break;
    case OpType::Barrier:
      b.ctx.syncers[op.arg0].sync(op.arg1, kSpinLimit);
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
      runReduce(b, op, o, off, unit);
      break;
    case OpType::PutPackets:
    case OpType::ReadPutPackets:
    case OpType::CopyPackets:
    case OpType::UnpackPackets:
    case OpType::ReducePackets:
    case OpType::ReduceCopyPackets:
    case OpType::ReduceSendPackets:
    case OpType::ReduceCopySendPackets:
      if (b.ctx.packetType == uint8_t(PacketType::LL8)) {
        runPacketOp<LL8Packet>(b, op, o, off, unit);
      } else {
        runPacketOp<LL16Packet>(b, op, o, off, unit);
      }
      break;
    case OpType::SemAcquire:
    case OpType::SemRelease:
      for (uint32_t i = threadIdx.x; i < op.nIndices; i += blockDim.x) {
        DeviceSemaphore& s = b.ctx.semaphores[b.ctx.indices[op.firstIndex + i]];
        if (OpType(op.type) == OpType::SemAcquire) {
          s.acquire(kSpinLimit);
        } else {
          s.release();
        }
      }
      break;
    case OpType::Pipeline:
      break;
  }
}

__global__ void __launch_bounds__(1024) interpreterKernel(DeviceContext ctx, char* input, char* output) {
  __shared__ uint32_t flag;
  if (threadIdx.x == 0) {
    flag = ctx.epochs[blockIdx.x] + 1;
    ctx.epochs[blockIdx.x] = flag;
  }
  __syncthreads();
  // Double scratch: consecutive executions alternate halves, so packets of the next one never land in
  // the half a slower peer is still reading.
  const uint64_t half = (ctx.scratchHalf != 0 && (flag & 1) == 0) ? ctx.scratchHalf : 0;
  const Block b{ctx, input, output, ctx.scratch + half, half, flag};
  const DeviceBlock blk = ctx.blocks[blockIdx.x];
  for (uint32_t i = 0; i < blk.nOps; ++i) {
    const DeviceOp& op = ctx.ops[blk.firstOp + i];
    if (OpType(op.type) != OpType::Pipeline) {
      runOp(b, op, 0, kNoUnit);
      continue;
    }
    for (uint64_t it = 0; it < op.nIterations; ++it) {
      for (uint32_t k = 1; k <= op.arg0; ++k) runOp(b, ctx.ops[blk.firstOp + i + k], it * op.unitSize, op.unitSize);
    }
    i += op.arg0;
  }
}

}  // namespace

void launchInterpreter(const DeviceContext& ctx, void* input, void* output, int nBlocks, int nThreads,
                       cudaStream_t stream) {
  interpreterKernel<<<nBlocks, nThreads, 0, stream>>>(ctx, static_cast<char*>(input), static_cast<char*>(output));
  MSCCLPP_CUDATHROW(cudaGetLastError());
}

}  // namespace mscclpp::executor
