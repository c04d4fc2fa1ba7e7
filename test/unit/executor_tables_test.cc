// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The per-block tables the interpreter copies into shared memory (no GPU): a resolution counts each
// op's operands and indices from its own block's first, packet ranges sit at twice their payload
// offset, and binding a resolution to a context's buffers lays out every block's table at the same
// stride with the operands' addresses and proxy ids filled in.

#include <gtest/gtest.h>

#include <cstring>
#include <mscclpp/executor.hpp>
#include <string>

#include "ext/executor/device_tables.hpp"
#include "ext/executor/plan.hpp"

using namespace mscclpp;
using namespace mscclpp::executor;

namespace {

const std::string kPlanDir = MSCCLPP_TEST_PLAN_DIR;

template <typename T>
T readAt(const DeviceTables& t, size_t block, size_t at) {
  T v;
  std::memcpy(&v, t.bytes.data() + block * t.tableBytes + at, sizeof(T));
  return v;
}

/// Two blocks: block 0 copies input [0, 64) to a peer's output [128, 192) over memory channel 1;
/// block 1 copies scratch [32, 96) to output [0, 64) and signals on channels 0 and 1.
ResolvedPlan twoBlocks() {
  ResolvedPlan r;
  r.operands = {
      {nullptr, 0, 64, 0, 0, uint8_t(BufferType::Input), 0, 0, {}},
      {nullptr, 128, 64, 0, 1, uint8_t(BufferType::Output), 1, 0, {}},
      {nullptr, 32, 64, 0, 0, uint8_t(BufferType::Scratch), 0, 0, {}},
      {nullptr, 0, 64, 0, 0, uint8_t(BufferType::Output), 0, 0, {}},
  };
  r.indices = {1, 0, 1};
  DeviceOp put{};
  put.type = uint8_t(OpType::Put);
  put.channelType = uint8_t(ChannelType::Memory);
  put.nInputs = 1;
  put.nOutputs = 1;
  put.nIndices = 1;
  DeviceOp copy{};
  copy.type = uint8_t(OpType::Copy);
  copy.nInputs = 1;
  copy.nOutputs = 1;
  DeviceOp signal{};
  signal.type = uint8_t(OpType::Signal);
  signal.channelType = uint8_t(ChannelType::Memory);
  signal.nIndices = 2;
  r.ops = {put, copy, signal};
  r.blocks = {{0, 1, 0, 2, 0, 1}, {1, 2, 2, 2, 1, 2}};
  return r;
}

BufferAddresses addresses() {
  BufferAddresses a{};
  a.local[0] = reinterpret_cast<char*>(0x10000);
  a.local[1] = reinterpret_cast<char*>(0x20000);
  a.local[2] = reinterpret_cast<char*>(0x30000);
  a.localIdBase = 5;
  a.remote = {nullptr, reinterpret_cast<char*>(0x90000)};
  a.remoteIds = {0, 11};
  a.memoryChannels.resize(2);
  a.memoryChannels[0].semaphore_.inboundToken = reinterpret_cast<uint64_t*>(0xa0);
  a.memoryChannels[1].semaphore_.inboundToken = reinterpret_cast<uint64_t*>(0xb0);
  return a;
}

TEST(ExecutorTablesTest, EveryBlockTableHasTheSameAlignedStride) {
  const DeviceTables t = buildDeviceTables(twoBlocks(), addresses());
  EXPECT_EQ(t.tableBytes % 16, 0u);
  EXPECT_EQ(t.bytes.size(), 2u * t.tableBytes);
  for (size_t b = 0; b < 2; ++b) {
    const auto h = readAt<DeviceTableHead>(t, b, 0);
    for (uint32_t at : {h.opsAt, h.operandsAt, h.indicesAt, h.memoryChannelsAt, h.portChannelsAt}) {
      EXPECT_EQ(at % 16, 0u);
      EXPECT_LE(at, t.tableBytes);
    }
    EXPECT_GE(h.opsAt, sizeof(DeviceTableHead));
  }
  EXPECT_EQ(readAt<DeviceTableHead>(t, 0, 0).nOps, 1u);
  EXPECT_EQ(readAt<DeviceTableHead>(t, 1, 0).nOps, 2u);
}

TEST(ExecutorTablesTest, OperandsCarryTheirAddressAndProxyId) {
  const DeviceTables t = buildDeviceTables(twoBlocks(), addresses());
  const auto h0 = readAt<DeviceTableHead>(t, 0, 0);
  const auto src = readAt<DeviceOperand>(t, 0, h0.operandsAt);
  const auto dst = readAt<DeviceOperand>(t, 0, h0.operandsAt + sizeof(DeviceOperand));
  EXPECT_EQ(src.ptr, reinterpret_cast<char*>(0x10000));
  EXPECT_EQ(src.id, 5u);
  EXPECT_EQ(dst.ptr, reinterpret_cast<char*>(0x90000 + 128));
  EXPECT_EQ(dst.id, 11u);
  EXPECT_EQ(dst.offset, 128u);
  const auto h1 = readAt<DeviceTableHead>(t, 1, 0);
  const auto scratch = readAt<DeviceOperand>(t, 1, h1.operandsAt);
  EXPECT_EQ(scratch.ptr, reinterpret_cast<char*>(0x30000 + 32));
  EXPECT_EQ(scratch.id, 5u + uint32_t(BufferType::Scratch));
}

TEST(ExecutorTablesTest, ARemoteBufferReachedOnlyByPortHasNoAddress) {
  ResolvedPlan r = twoBlocks();
  r.operands[1].ref = 0;  // remote buffer 0 is not mapped here
  const DeviceTables t = buildDeviceTables(r, addresses());
  const auto h0 = readAt<DeviceTableHead>(t, 0, 0);
  EXPECT_EQ(readAt<DeviceOperand>(t, 0, h0.operandsAt + sizeof(DeviceOperand)).ptr, nullptr);
}

TEST(ExecutorTablesTest, EachTableHoldsItsBlocksOpsIndicesAndTheChannelHandles) {
  const DeviceTables t = buildDeviceTables(twoBlocks(), addresses());
  const auto h1 = readAt<DeviceTableHead>(t, 1, 0);
  EXPECT_EQ(readAt<DeviceOp>(t, 1, h1.opsAt).type, uint8_t(OpType::Copy));
  EXPECT_EQ(readAt<DeviceOp>(t, 1, h1.opsAt + sizeof(DeviceOp)).type, uint8_t(OpType::Signal));
  EXPECT_EQ(readAt<uint32_t>(t, 1, h1.indicesAt), 0u);
  EXPECT_EQ(readAt<uint32_t>(t, 1, h1.indicesAt + 4), 1u);
  const auto ch1 =
      readAt<BaseMemoryChannelDeviceHandle>(t, 1, h1.memoryChannelsAt + sizeof(BaseMemoryChannelDeviceHandle));
  EXPECT_EQ(ch1.semaphore_.inboundToken, reinterpret_cast<uint64_t*>(0xb0));
  const auto h0 = readAt<DeviceTableHead>(t, 0, 0);
  EXPECT_EQ(readAt<uint32_t>(t, 0, h0.indicesAt), 1u);
}

TEST(ExecutorTablesTest, ResolvedOpsCountOperandsAndIndicesFromTheirBlock) {
  for (const char* name : {"allreduce_twoshot_ll_recspkt_4ranks.json", "allgather_port_pws_4ranks.json",
                           "allreduce_pipeline_4ranks.json"}) {
    SCOPED_TRACE(name);
    ExecutionPlan plan(kPlanDir + "/" + name, 1);
    const auto& impl = ExecutionPlanAccess::impl(plan);
    // Chunks of 16-byte units that every block's part divides.
    const uint64_t chunk = 16 * 4 * 4 * 12;
    const uint64_t in = chunk * impl->self().inputChunks;
    const uint64_t out = impl->self().outputChunks > 0 ? chunk * impl->self().outputChunks : in;
    const auto r = impl->resolve(in, out, PacketType::LL16);
    ASSERT_GT(r.blocks.size(), 1u);
    for (const DeviceBlock& b : r.blocks) {
      for (uint32_t i = 0; i < b.nOps; ++i) {
        const DeviceOp& op = r.ops[b.firstOp + i];
        EXPECT_LE(op.firstOperand + op.nInputs + op.nOutputs, b.nOperands);
        EXPECT_LE(op.firstIndex + op.nIndices, b.nIndices);
      }
    }
  }
}

TEST(ExecutorTablesTest, PacketRangesSitAtTwiceTheirPayloadOffset) {
  ExecutionPlan plan(kPlanDir + "/allgather_ll_memory_2ranks.json", 0);
  const uint64_t chunk = 8 * 1024;
  const auto r = ExecutionPlanAccess::impl(plan)->resolve(chunk, 2 * chunk, PacketType::LL8);
  // Rank 0's cpkt writes packets of its input into scratch chunk 0, and its upkt reads packets of
  // scratch chunk 1: each block's part starts at twice its payload offset.
  int packetRanges = 0;
  for (const DeviceBlock& b : r.blocks) {
    for (uint32_t i = 0; i < b.nOps; ++i) {
      const DeviceOp& op = r.ops[b.firstOp + i];
      if (op.type != uint8_t(OpType::UnpackPackets)) continue;
      const DeviceOperand& pk = r.operands[b.firstOperand + op.firstOperand];
      const DeviceOperand& out = r.operands[b.firstOperand + op.firstOperand + 1];
      EXPECT_EQ(pk.packets, 1);
      EXPECT_EQ(out.packets, 0);
      // The payload offset within the scratch equals the output's offset within chunk 1.
      EXPECT_EQ(pk.offset, 2 * out.offset);
      ++packetRanges;
    }
  }
  EXPECT_EQ(packetRanges, static_cast<int>(r.blocks.size()));
}

TEST(ExecutorTablesTest, SimplePlansRunOnAtMost512ThreadsAndPacketPlansOnTheirOwnCount) {
  // MSCCL++'s own plans ask for 1024 threads per block.
  EXPECT_EQ(interpreterThreads(1024, false), kSimplePlanThreads);
  EXPECT_EQ(kSimplePlanThreads, 512u);
  EXPECT_EQ(interpreterThreads(256, false), 256u);
  EXPECT_EQ(interpreterThreads(1024, true), 1024u);
  EXPECT_EQ(interpreterThreads(96, true), 96u);
  // The parsed plans decide by their protocol.
  const ExecutionPlan simple(kPlanDir + "/allreduce_oneshot_2ranks.json", 0);
  const ExecutionPlan packets(kPlanDir + "/allgather_ll_memory_2ranks.json", 0);
  const auto& s = *ExecutionPlanAccess::impl(simple);
  const auto& p = *ExecutionPlanAccess::impl(packets);
  EXPECT_EQ(interpreterThreads(s.nThreadsPerBlock, s.isUsingPacket), 512u);
  EXPECT_EQ(interpreterThreads(p.nThreadsPerBlock, p.isUsingPacket), 1024u);
}

}  // namespace
