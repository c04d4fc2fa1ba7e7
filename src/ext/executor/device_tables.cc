// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/executor/device_tables.hpp"

#include <algorithm>
#include <cstring>

namespace mscclpp::executor {

namespace {

uint32_t roundUp16(uint64_t bytes) { return static_cast<uint32_t>((bytes + 15) / 16 * 16); }

/// memcpy that takes the empty vectors' null data() too.
void put(char* at, const void* from, size_t bytes) {
  if (bytes > 0) std::memcpy(at, from, bytes);
}

/// `o` with the address and proxy id of the buffer it falls in.
DeviceOperand bind(DeviceOperand o, const BufferAddresses& a) {
  if (o.remote) {
    char* base = a.remote[o.ref];
    o.ptr = base != nullptr ? base + o.offset : nullptr;
    o.id = a.remoteIds[o.ref];
  } else {
    o.ptr = a.local[o.buffer] + o.offset;
    o.id = a.localIdBase + o.buffer;
  }
  return o;
}

}  // namespace

DeviceTables buildDeviceTables(const ResolvedPlan& r, const BufferAddresses& a) {
  const uint64_t memoryBytes = a.memoryChannels.size() * sizeof(BaseMemoryChannelDeviceHandle);
  const uint64_t portBytes = a.portChannels.size() * sizeof(BasePortChannelDeviceHandle);
  // Every block's table is as long as the longest, so that block b finds its own at b x tableBytes
  // without reading an index first.
  uint64_t longest = 0;
  std::vector<DeviceTableHead> heads;
  for (const DeviceBlock& b : r.blocks) {
    DeviceTableHead h{};
    h.nOps = b.nOps;
    h.opsAt = roundUp16(sizeof(DeviceTableHead));
    h.operandsAt = roundUp16(h.opsAt + uint64_t(b.nOps) * sizeof(DeviceOp));
    h.indicesAt = roundUp16(h.operandsAt + uint64_t(b.nOperands) * sizeof(DeviceOperand));
    h.memoryChannelsAt = roundUp16(h.indicesAt + uint64_t(b.nIndices) * sizeof(uint32_t));
    h.portChannelsAt = roundUp16(h.memoryChannelsAt + memoryBytes);
    longest = std::max<uint64_t>(longest, roundUp16(h.portChannelsAt + portBytes));
    heads.push_back(h);
  }
  DeviceTables t;
  t.tableBytes = static_cast<uint32_t>(longest);
  t.bytes.assign(longest * r.blocks.size(), 0);
  for (size_t bi = 0; bi < r.blocks.size(); ++bi) {
    const DeviceBlock& b = r.blocks[bi];
    const DeviceTableHead& h = heads[bi];
    char* table = t.bytes.data() + bi * longest;
    put(table, &h, sizeof(h));
    put(table + h.opsAt, r.ops.data() + b.firstOp, b.nOps * sizeof(DeviceOp));
    for (uint32_t i = 0; i < b.nOperands; ++i) {
      const DeviceOperand o = bind(r.operands[b.firstOperand + i], a);
      put(table + h.operandsAt + i * sizeof(DeviceOperand), &o, sizeof(o));
    }
    put(table + h.indicesAt, r.indices.data() + b.firstIndex, b.nIndices * sizeof(uint32_t));
    put(table + h.memoryChannelsAt, a.memoryChannels.data(), memoryBytes);
    put(table + h.portChannelsAt, a.portChannels.data(), portBytes);
  }
  return t;
}

}  // namespace mscclpp::executor
