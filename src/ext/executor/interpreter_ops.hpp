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

/// 16-byte vectors each thread loads per input in a reduction of other than two inputs (reduceWords):
/// two inputs' words (4 registers each) and the accumulators (one register per element) then fit in 32
/// registers, half of what a thread of a 1024-thread block has: 2 (1 for fp8).
template <typename T>
constexpr int kReduceUnroll = Packed<T, 16>::N >= 16 ? 1 : 2;

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
//
// A block's threads all load, then all add, then all store, so a reduction costs mostly the round trips
// to memory each thread waits for in turn, and then the instructions of all its warps: the loops below
// issue every load of a step before the first add that needs one. For example, MSCCL++'s allreduce.json
// at 1 MiB gives each of a block's 1024 threads four 16-byte words of each of two inputs: loading all
// eight at once takes one round trip; loading one input after the other, two words at a time, would
// take four.

/// Where the first two inputs and outputs of a reduction start in this step. They are read from the
/// table once per operation: inside the word loops the compiler would reload them from shared memory
/// after every store, since a generic store may alias the table.
struct ReduceEnds {
  const char* in0;
  const char* in1;  // null with a single input
  char* out0;       // null without outputs
  char* out1;       // null with fewer than two outputs
};

/// Stores packed words v[0..kUnroll) at word i, i + stride, ... of every output.
template <int Bytes, int kUnroll>
__device__ __forceinline__ void storeWords(const Block& b, const DeviceOperand* out, int nOut, const ReduceEnds& e,
                                           uint64_t off, uint64_t i, const ext::PackedWord<Bytes>* v) {
  using Word = ext::PackedWord<Bytes>;
  const uint64_t stride = blockDim.x;
  if (nOut > 0) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) reinterpret_cast<Word*>(e.out0)[i + u * stride] = v[u];
  }
  if (nOut > 1) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) reinterpret_cast<Word*>(e.out1)[i + u * stride] = v[u];
  }
  for (int k = 2; k < nOut; ++k) {
    Word* dst = reinterpret_cast<Word*>(b.at(out[k], off));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
}

/// Two inputs (this GPU's data and one peer's, the case of every reduction of a two-rank plan): all
/// 2 * kUnroll loads go out together, then each word pair is summed with one rounding (combineWords).
template <typename T, int kUnroll>
__device__ __forceinline__ void reducePairWords(const Block& b, const DeviceOperand* out, int nOut, const ReduceEnds& e,
                                                uint64_t off, uint64_t i) {
  using Word = ext::PackedWord<16>;
  const uint64_t stride = blockDim.x;
  const Word* x = reinterpret_cast<const Word*>(e.in0);
  const Word* y = reinterpret_cast<const Word*>(e.in1);
  Word a[kUnroll], c[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) a[u] = x[i + u * stride];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) c[u] = y[i + u * stride];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) a[u] = ext::combineWords<T, ext::ReduceKind::Sum, 16>(a[u], c[u]);
  storeWords<16, kUnroll>(b, out, nOut, e, off, i, a);
}

/// Any number of inputs, accumulated in the wider type and rounded once: the words of input k + 1 are
/// loaded before those of input k are added, so that two inputs' loads are always in flight.
template <typename T, int Bytes, int kUnroll>
__device__ __forceinline__ void reduceWords(const Block& b, const DeviceOperand* in, int nIn, const DeviceOperand* out,
                                            int nOut, const ReduceEnds& e, uint64_t off, uint64_t i) {
  using Word = ext::PackedWord<Bytes>;
  const SumReducer<T> r(ext::ReduceSpec{}, 0);
  const uint64_t stride = blockDim.x;
  Word cur[kUnroll], next[kUnroll];
  const Word* src = reinterpret_cast<const Word*>(e.in0);
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) cur[u] = src[i + u * stride];
  if (nIn > 1) {
    src = reinterpret_cast<const Word*>(e.in1);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) next[u] = src[i + u * stride];
  }
  SumAcc<T, Bytes> acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u].begin(r, Packed<T, Bytes>(cur[u]));
  for (int k = 1; k < nIn; ++k) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) cur[u] = next[u];
    if (k + 1 < nIn) {
      src = reinterpret_cast<const Word*>(b.at(in[k + 1], off));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) next[u] = src[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u].add(r, Packed<T, Bytes>(cur[u]));
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) cur[u] = acc[u].end(r).raw;
  storeWords<Bytes, kUnroll>(b, out, nOut, e, off, i, cur);
}

/// 16-byte words per input each thread loads at once in the two-input case: four cover a 64 KiB chunk
/// with 1024 threads in one round trip and keep 8 loads in flight per thread on larger chunks; their 32
/// registers fit beside the interpreter's state (for fp8, whose float path needs more registers, the
/// compiler issues half of them at a time).
constexpr int kPairUnroll = 4;

template <typename T>
__device__ void runReduce(const Block& b, const DeviceOp& op, const DeviceOperand* o, uint64_t off, uint64_t unit) {
  const uint64_t bytes = sizeAt(o[0], off, unit);
  if (bytes == 0) return;
  const int nIn = op.nInputs, nOut = op.nOutputs;
  const DeviceOperand* out = o + nIn;
  bool aligned = true;
  for (int k = 0; k < nIn + nOut; ++k) aligned &= (reinterpret_cast<uintptr_t>(b.at(o[k], off)) & 15) == 0;
  const ReduceEnds e{b.at(o[0], off), nIn > 1 ? b.at(o[1], off) : nullptr, nOut > 0 ? b.at(out[0], off) : nullptr,
                     nOut > 1 ? b.at(out[1], off) : nullptr};
  const uint64_t n16 = aligned ? bytes / 16 : 0;
  const uint64_t stride = blockDim.x;
  uint64_t i = threadIdx.x;
  if (nIn == 2) {
    for (; i + (kPairUnroll - 1) * stride < n16; i += kPairUnroll * stride) {
      reducePairWords<T, kPairUnroll>(b, out, nOut, e, off, i);
    }
    for (; i < n16; i += stride) reducePairWords<T, 1>(b, out, nOut, e, off, i);
  } else {
    constexpr int kUnroll = kReduceUnroll<T>;
    for (; i + (kUnroll - 1) * stride < n16; i += kUnroll * stride) {
      reduceWords<T, 16, kUnroll>(b, o, nIn, out, nOut, e, off, i);
    }
    for (; i < n16; i += stride) reduceWords<T, 16, 1>(b, o, nIn, out, nOut, e, off, i);
  }
  // What is left of a range that is not 16-byte aligned or sized, in 4-byte words (every range is whole
  // words: the plan's alignment is a multiple of 4).
  for (uint64_t w = n16 * 4 + threadIdx.x; w < bytes / 4; w += stride) {
    reduceWords<T, 4, 1>(b, o, nIn, out, nOut, e, off, w);
  }
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
    Payload acc;
    if (nIn == 2) {
      // Two inputs: one rounding either way, and combineWords adds fp16 and bf16 in native pairs.
      acc = ext::combineWords<T, ext::ReduceKind::Sum, kBytes>(src0[i], in1[i].read(b.flag, kSpinLimit));
    } else {
      SumAcc<T, kBytes> sum;
      sum.begin(r, Packed<T, kBytes>(src0[i]));
      if (in1 != nullptr) sum.add(r, Packed<T, kBytes>(in1[i].read(b.flag, kSpinLimit)));
      for (int k = 2; k < nIn; ++k) {
        sum.add(r, Packed<T, kBytes>(reinterpret_cast<const P*>(b.at(o[k], off))[i].read(b.flag, kSpinLimit)));
      }
      acc = sum.end(r).raw;
    }
    dst0[i] = acc;
    if (out1 != nullptr) out1[i].write(acc, b.flag);
    for (int k = 2; k < nOut; ++k) reinterpret_cast<P*>(b.at(dst[k], off))[i].write(acc, b.flag);
  }
}

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_INTERPRETER_OPS_HPP_
