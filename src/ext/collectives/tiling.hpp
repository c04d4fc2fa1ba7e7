// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// How a message is cut into the pieces that thread blocks move, shared by the host (which sizes the
// grid) and the kernels (which walk the pieces). Every rank computes the same cuts from the same
// arguments, so block b of one rank always meets block b of its peer on the same bytes: that is what
// lets a barrier between two ranks be per block, and a scratch slot be owned by one block.

#ifndef MSCCLPP_EXT_COLLECTIVES_TILING_HPP_
#define MSCCLPP_EXT_COLLECTIVES_TILING_HPP_

#include <cstdint>
#include <mscclpp/device.hpp>

namespace mscclpp {
namespace collectives {

MSCCLPP_HOST_DEVICE_INLINE uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
MSCCLPP_HOST_DEVICE_INLINE uint64_t roundUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }

/// Elements [0, elems) cut into tiles of `tileElems`; tile t is moved by block t % nBlocks in round
/// t / nBlocks. Every block runs `rounds` rounds (its last tiles may be short or empty), so blocks of
/// two ranks that meet at barriers meet the same number of times.
struct Tiling {
  uint64_t elems = 0;
  uint64_t tileElems = 0;
  uint32_t nBlocks = 0;
  uint64_t rounds = 0;

  /// Element range of the tile of block b in round k: [begin, end), possibly empty.
  MSCCLPP_HOST_DEVICE_INLINE uint64_t tileBegin(uint32_t b, uint64_t k) const {
    const uint64_t begin = (k * nBlocks + b) * tileElems;
    return begin < elems ? begin : elems;
  }
  MSCCLPP_HOST_DEVICE_INLINE uint64_t tileEnd(uint32_t b, uint64_t k) const {
    const uint64_t end = (k * nBlocks + b + 1) * tileElems;
    return end < elems ? end : elems;
  }
};

/// Cuts `elems` elements of `elemSize` bytes into tiles that are whole multiples of 16 bytes (so a
/// tile starts as aligned as the buffer does) and at most `maxTileBytes`, over at most `maxBlocks`
/// blocks, aiming at `bytesPerBlock` bytes per block before adding blocks. Zero elements: no blocks.
MSCCLPP_HOST_DEVICE_INLINE Tiling makeTiling(uint64_t elems, uint32_t elemSize, uint32_t maxBlocks,
                                             uint64_t maxTileBytes, uint64_t bytesPerBlock) {
  Tiling t;
  t.elems = elems;
  if (elems == 0 || maxBlocks == 0) return t;
  const uint64_t align = 16 / elemSize;  // elements per 16 bytes; elemSize is 1, 2, 4 or 8
  uint64_t blocks = ceilDiv(elems * elemSize, bytesPerBlock);
  if (blocks > maxBlocks) blocks = maxBlocks;
  if (blocks == 0) blocks = 1;
  const uint64_t maxTileElems = (maxTileBytes / elemSize) / align * align;
  uint64_t tileElems = roundUp(ceilDiv(elems, blocks), align);
  if (tileElems > maxTileElems) tileElems = maxTileElems;
  const uint64_t tiles = ceilDiv(elems, tileElems);
  if (blocks > tiles) blocks = tiles;
  t.tileElems = tileElems;
  t.nBlocks = static_cast<uint32_t>(blocks);
  t.rounds = ceilDiv(tiles, blocks);
  return t;
}

/// The chunk each rank owns in a reduce-scatter + all-gather all-reduce: `count` elements cut into
/// nRanks chunks of equal size rounded up to 16 bytes (the last chunks may be short or empty).
MSCCLPP_HOST_DEVICE_INLINE uint64_t allReduceChunkElems(uint64_t count, uint32_t elemSize, int nRanks) {
  return roundUp(ceilDiv(count, static_cast<uint64_t>(nRanks)), 16 / elemSize);
}

/// LL two-shot aims at this many packets of one chunk per block before it adds blocks.
constexpr uint64_t kTwoShotPacketsPerBlock = 512;

/// LL one-shot: `bytes` of one segment travel as ceil(bytes / 8) packets of 8 payload bytes, spread
/// over blocks of `packetsPerBlock` packets each (the last one shorter).
struct PacketTiling {
  uint64_t packets = 0;
  uint64_t packetsPerBlock = 0;
  uint32_t nBlocks = 0;

  MSCCLPP_HOST_DEVICE_INLINE uint64_t begin(uint32_t b) const { return b * packetsPerBlock; }
  MSCCLPP_HOST_DEVICE_INLINE uint64_t end(uint32_t b) const {
    const uint64_t e = (b + 1) * packetsPerBlock;
    return e < packets ? e : packets;
  }
};

/// Spreads the packets of `bytes` over at most `maxBlocks` blocks, `targetPacketsPerBlock` each
/// before adding blocks; every block gets at least one packet.
MSCCLPP_HOST_DEVICE_INLINE PacketTiling makePacketTiling(uint64_t bytes, uint32_t maxBlocks,
                                                         uint64_t targetPacketsPerBlock) {
  PacketTiling t;
  t.packets = ceilDiv(bytes, 8);
  if (t.packets == 0 || maxBlocks == 0) return t;
  uint64_t blocks = ceilDiv(t.packets, targetPacketsPerBlock);
  if (blocks > maxBlocks) blocks = maxBlocks;
  t.packetsPerBlock = ceilDiv(t.packets, blocks);
  t.nBlocks = static_cast<uint32_t>(ceilDiv(t.packets, t.packetsPerBlock));
  return t;
}

/// LL two-shot all-reduce of `bytes`: each of the nRanks chunks is ceil(ceil(bytes / 8) / nRanks)
/// packets (the last chunk padded), and one chunk's packets are spread over the blocks.
MSCCLPP_HOST_DEVICE_INLINE PacketTiling twoShotTiling(uint64_t bytes, int nRanks, uint32_t maxBlocks) {
  const uint64_t chunkPackets = ceilDiv(ceilDiv(bytes, 8), static_cast<uint64_t>(nRanks));
  return makePacketTiling(chunkPackets * 8, maxBlocks, kTwoShotPacketsPerBlock);
}

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_TILING_HPP_
