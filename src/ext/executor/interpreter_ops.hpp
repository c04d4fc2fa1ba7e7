// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The operations of the interpreter, for element type T and packet type P, as the threads of one block
// run them. A block reads its operations, operands, indices and channel handles from its table in
// shared memory (Block); every range was checked on the host (resolve.cc), so nothing here checks
// bounds. Device code only: included by interpreter.cu.

#ifndef MSCCLPP_EXT_EXECUTOR_INTERPRETER_OPS_HPP_
#define MSCCLPP_EXT_EXECUTOR_INTERPRETER_OPS_HPP_

#include <mscclpp/concurrency_device.hpp>
#include <mscclpp/copy_device.hpp>
#include <mscclpp/packet_device.hpp>

#include "ext/common/device_ops.hpp"
#include "ext/executor/device_plan.hpp"

namespace mscclpp::executor {

using ext::copyBytes;
using ext::kSpinLimit;

constexpr uint64_t kNoUnit = UINT64_MAX;

/// The executor's one reduction: sums, accumulated as device_ops.hpp accumulates them (fp16, bf16 and
/// fp8 in float, rounded once at the end).
template <typename T>
using SumReducer = ext::Reducer<T, ext::ReduceKind::Sum>;

template <typename T, int Bytes>
using SumAcc = ext::VecAcc<T, ext::ReduceKind::Sum, Bytes>;

template <typename T, int Bytes>
using Packed = ext::Vec<T, Bytes>;

/// 16-byte vectors each thread loads per input before it adds, so that several reads are in flight at
/// once: as many as keep the float accumulators at 16 per thread (4 for 4-byte types, 1 for fp8).
template <typename T>
constexpr int kReduceUnroll = 16 / Packed<T, 16>::N;

/// One block's view of its table (in shared memory) and of the execution it runs.
struct Block {
  const DeviceOperand* operands;
  const uint32_t* indices;
  BaseMemoryChannelDeviceHandle* memoryChannels;
  BasePortChannelDeviceHandle* portChannels;
  DeviceSyncer* syncers;
  DeviceSemaphore* semaphores;
  uint64_t half;  // the offset of the scratch half in use (peers' scratch too)
  uint32_t flag;  // the packet flag of this execution

  /// Scratch ranges move to the half in use; a pipeline step `off` moves packets twice as far.
  __device__ __forceinline__ uint64_t shift(const DeviceOperand& o, uint64_t off) const {
    return (o.buffer == uint8_t(BufferType::Scratch) ? half : 0) + (o.packets ? 2 * off : off);
  }
  __device__ __forceinline__ char* at(const DeviceOperand& o, uint64_t off) const { return o.ptr + shift(o, off); }
  __device__ __forceinline__ uint64_t proxyOffset(const DeviceOperand& o, uint64_t off) const {
    return o.offset + shift(o, off);
  }
};

__device__ __forceinline__ uint64_t sizeAt(const DeviceOperand& o, uint64_t off, uint64_t unit) {
  return o.size > off ? min(o.size - off, unit) : 0;
}

// ---- synchronization ----

__device__ void runSignalWait(const Block& b, const DeviceOp& op) {
  const OpType type = OpType(op.type);
  for (uint32_t i = threadIdx.x; i < op.nIndices; i += blockDim.x) {
    const uint32_t c = b.indices[op.firstIndex + i];
    if (op.channelType == uint8_t(ChannelType::Memory)) {
      BaseMemoryChannelDeviceHandle& ch = b.memoryChannels[c];
      if (type == OpType::Signal) {
        ch.signal();
      } else if (type == OpType::RelaxedSignal) {
        ch.relaxedSignal();
      } else if (type == OpType::Wait) {
        ch.wait(kSpinLimit);
      } else {
        ch.relaxedWait(kSpinLimit);
      }
      continue;
    }
    BasePortChannelDeviceHandle& ch = b.portChannels[c];
    if (type == OpType::Signal || type == OpType::RelaxedSignal) {
      ch.signal();
    } else if (type == OpType::Flush) {
      ch.flush(kSpinLimit);
    } else {
      ch.wait(kSpinLimit);
    }
  }
}

// DeviceSemaphore::acquire takes its limit as an int (as in MSCCL++), which kSpinLimit overflows: the
// longest wait an int allows instead.
constexpr int kSemaphoreSpinLimit = INT32_MAX;

__device__ void runSemaphore(const Block& b, const DeviceOp& op) {
  for (uint32_t i = threadIdx.x; i < op.nIndices; i += blockDim.x) {
    DeviceSemaphore& s = b.semaphores[b.indices[op.firstIndex + i]];
    if (OpType(op.type) == OpType::SemAcquire) {
      s.acquire(kSemaphoreSpinLimit);
    } else {
      s.release();
    }
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
      if (n > 0) copyBytes(b.at(dst[i], off), b.at(src[i], off), n);
    }
    if (type != OpType::Put) {
      __syncthreads();
      for (uint32_t i = threadIdx.x; i < op.nIndices; i += blockDim.x) {
        b.memoryChannels[b.indices[op.firstIndex + i]].signal();
      }
    }
    return;
  }
  // The proxy reads what the other threads wrote before: they must be done.
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < op.nOutputs; i += blockDim.x) {
    const uint64_t n = sizeAt(src[i], off, unit);
    BasePortChannelDeviceHandle& ch = b.portChannels[b.indices[op.firstIndex + i]];
    const uint64_t dstOff = b.proxyOffset(dst[i], off), srcOff = b.proxyOffset(src[i], off);
    if (type == OpType::Put) {
      if (n > 0) ch.put(dst[i].id, dstOff, src[i].id, srcOff, n);
    } else if (type == OpType::PutWithSignal) {
      if (n > 0) {
        ch.putWithSignal(dst[i].id, dstOff, src[i].id, srcOff, n);
      } else {
        ch.signal();
      }
    } else if (n > 0) {
      ch.putWithSignalAndFlush(dst[i].id, dstOff, src[i].id, srcOff, n, kSpinLimit);
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
    if (n > 0) copyBytes(b.at(dst[i], off), b.at(src[i], off), n);
  }
}

// ---- reductions of plain data: dst0 = src0 + src1 + ..., also written to dsts 1.. when sending ----

/// Sums the packed words i, i + stride, ... (kUnroll of them) of the inputs into the outputs.
template <typename T, int Bytes, int kUnroll>
__device__ __forceinline__ void reduceWords(const Block& b, const DeviceOperand* in, int nIn, const DeviceOperand* out,
                                            int nOut, uint64_t off, uint64_t i) {
  using Word = ext::PackedWord<Bytes>;
  const SumReducer<T> r(ext::ReduceSpec{}, 0);
  const uint64_t stride = blockDim.x;
  SumAcc<T, Bytes> acc[kUnroll];
  Word v[kUnroll];
  const Word* in0 = reinterpret_cast<const Word*>(b.at(in[0], off));
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) v[u] = in0[i + u * stride];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u].begin(r, Packed<T, Bytes>(v[u]));
  for (int k = 1; k < nIn; ++k) {
    const Word* src = reinterpret_cast<const Word*>(b.at(in[k], off));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u].add(r, Packed<T, Bytes>(v[u]));
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) v[u] = acc[u].end(r).raw;
  for (int k = 0; k < nOut; ++k) {
    Word* dst = reinterpret_cast<Word*>(b.at(out[k], off));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
}

template <typename T>
__device__ void runReduce(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const uint64_t bytes = sizeAt(o[0], off, unit);
  if (bytes == 0) return;
  const int nIn = op.nInputs, nOut = op.nOutputs;
  const DeviceOperand* out = o + nIn;
  bool aligned = true;
  for (int k = 0; k < nIn + nOut; ++k) aligned &= (reinterpret_cast<uintptr_t>(b.at(o[k], off)) & 15) == 0;
  const uint64_t n16 = aligned ? bytes / 16 : 0;
  const uint64_t stride = blockDim.x;
  constexpr int kUnroll = kReduceUnroll<T>;
  uint64_t i = threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n16; i += kUnroll * stride) {
    reduceWords<T, 16, kUnroll>(b, o, nIn, out, nOut, off, i);
  }
  for (; i < n16; i += stride) reduceWords<T, 16, 1>(b, o, nIn, out, nOut, off, i);
  // What is left of a range that is not 16-byte aligned or sized, in 4-byte words (every range is whole
  // words: the plan's alignment is a multiple of 4).
  for (uint64_t w = n16 * 4 + threadIdx.x; w < bytes / 4; w += stride)
    reduceWords<T, 4, 1>(b, o, nIn, out, nOut, off, w);
}

// ---- packets ----

// Port-channel half of the packet puts: once the packets are staged in src, one thread per output asks
// the proxy to move them (2 * n bytes: a packet carries as many flag bytes as payload bytes).
__device__ inline void putPacketsThroughPorts(const Block& b, const DeviceOp& op, const DeviceOperand* src,
                                              const DeviceOperand* dst, uint64_t off, uint64_t unit) {
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < op.nOutputs; i += blockDim.x) {
    const uint64_t n = sizeAt(src[i], off, unit);
    if (n == 0) continue;
    b.portChannels[b.indices[op.firstIndex + i]].put(dst[i].id, b.proxyOffset(dst[i], off), src[i].id,
                                                     b.proxyOffset(src[i], off), 2 * n);
  }
}

template <typename P>
__device__ void runPutPackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const DeviceOperand* src = o;
  const DeviceOperand* dst = o + op.nInputs;
  if (op.channelType == uint8_t(ChannelType::Memory)) {
    for (uint32_t i = 0; i < op.nOutputs; ++i) {
      const uint64_t n = sizeAt(src[i], off, unit);
      if (n > 0) copyToPackets<P>(b.at(dst[i], off), b.at(src[i], off), n, threadIdx.x, blockDim.x, b.flag);
    }
    return;
  }
  putPacketsThroughPorts(b, op, src, dst, off, unit);
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
    const P* in = reinterpret_cast<const P*>(b.at(src[i], off));
    P* out = memory ? reinterpret_cast<P*>(b.at(dst[i], off)) : nullptr;
    for (uint64_t k = threadIdx.x; k < n / sizeof(Payload); k += blockDim.x) {
      const Payload v = in[k].read(b.flag, kSpinLimit);
      if (memory) out[k].write(v, b.flag);
    }
  }
  if (memory) return;
  putPacketsThroughPorts(b, op, src, dst, off, unit);
}

template <typename P>
__device__ void runCopyPackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off,
                               uint64_t unit) {
  const uint64_t n = sizeAt(o[0], off, unit);
  if (n == 0) return;
  if (OpType(op.type) == OpType::CopyPackets) {
    copyToPackets<P>(b.at(o[1], off), b.at(o[0], off), n, threadIdx.x, blockDim.x, b.flag);
  } else {
    copyFromPackets<P>(b.at(o[1], off), b.at(o[0], off), n, threadIdx.x, blockDim.x, b.flag, kSpinLimit);
  }
}

/// repkt / respkt / recpkt / recspkt: dst0 = src0 + the packets of srcs 1..; recpkt and recspkt also
/// write the sum as packets to dst1 (local scratch); respkt and recspkt send it as packets to the
/// remaining dsts (peers' scratch). Every output after the first holds packets.
template <typename T, typename P>
__device__ void runReducePackets(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off,
                                 uint64_t unit) {
  using Payload = typename P::Payload;
  constexpr int kBytes = sizeof(Payload);
  const SumReducer<T> r(ext::ReduceSpec{}, 0);
  const uint64_t n = sizeAt(o[0], off, unit);
  if (n == 0) return;
  const int nIn = op.nInputs, nOut = op.nOutputs;
  const DeviceOperand* dst = o + nIn;
  const Payload* src0 = reinterpret_cast<const Payload*>(b.at(o[0], off));
  Payload* dst0 = reinterpret_cast<Payload*>(b.at(dst[0], off));
  // The first packet input and output (a two-rank plan has no others) are addressed once, outside the
  // loop whose every step waits for a packet.
  const P* in1 = nIn > 1 ? reinterpret_cast<const P*>(b.at(o[1], off)) : nullptr;
  P* out1 = nOut > 1 ? reinterpret_cast<P*>(b.at(dst[1], off)) : nullptr;
  for (uint64_t i = threadIdx.x; i < n / sizeof(Payload); i += blockDim.x) {
    SumAcc<T, kBytes> sum;
    sum.begin(r, Packed<T, kBytes>(src0[i]));
    if (in1 != nullptr) sum.add(r, Packed<T, kBytes>(in1[i].read(b.flag, kSpinLimit)));
    for (int k = 2; k < nIn; ++k) {
      sum.add(r, Packed<T, kBytes>(reinterpret_cast<const P*>(b.at(o[k], off))[i].read(b.flag, kSpinLimit)));
    }
    const Payload acc = sum.end(r).raw;
    dst0[i] = acc;
    if (out1 != nullptr) out1[i].write(acc, b.flag);
    for (int k = 2; k < nOut; ++k) reinterpret_cast<P*>(b.at(dst[k], off))[i].write(acc, b.flag);
  }
}

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_INTERPRETER_OPS_HPP_
