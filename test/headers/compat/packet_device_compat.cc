// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/packet_device.hpp>
#include <type_traits>

namespace compat {

static_assert(sizeof(mscclpp::LL16Packet) == 16 && sizeof(mscclpp::LL8Packet) == 8);
static_assert(std::is_same_v<mscclpp::LLPacket, mscclpp::LL16Packet>);
static_assert(std::is_same_v<mscclpp::LL16Packet::Payload, uint2>);
static_assert(std::is_same_v<mscclpp::LL8Packet::Payload, uint32_t>);

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void usePacketDevice(mscclpp::LL16Packet* p16, mscclpp::LL8Packet* p8) {
  p16->write(1u, 2u, 1u);
  p16->write(uint64_t{3}, 1u);
  p16->write(make_uint2(4, 5), 1u);
  uint2 data;
  if (p16->readOnce(1u, data)) return;
  data = p16->read(1u);
  data = p16->read(1u, 100);
  p16->clear();
  mscclpp::LL16Packet made(data, 2u);
  p16[1] = made;
  p8->write(data.x, 1u);
  uint32_t word;
  if (p8->readOnce(1u, word)) return;
  word = p8->read(1u) + p8->read(1u, 100);
  p8->clear();
  mscclpp::LL8Packet made8(word, 3u);
  p8[1] = made8;
}
#endif

}  // namespace compat
