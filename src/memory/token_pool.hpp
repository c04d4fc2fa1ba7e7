// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The pool of 8-byte device tokens behind semaphores (docs/memory.md). An exportable cuMem allocation
// is at least one granule (2 MiB on an H200), so one allocation per semaphore token would waste a
// granule and an exported handle per semaphore; the pool packs a granule's worth of tokens into each
// chunk and grows chunk by chunk.

#ifndef MSCCLPP_MEMORY_TOKEN_POOL_HPP_
#define MSCCLPP_MEMORY_TOKEN_POOL_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace mscclpp {

/// Slots of equally sized chunks, one bit each in 64-bit words, plus one summary bit per word that says
/// whether the word is full. The lowest free slot is found with count-trailing-zeros on the complement
/// of the summary, then of the word, starting from a hint below which nothing is free: O(1) amortised
/// per operation instead of a scan bit by bit. Pure host logic. Thread-safe.
class SlotBitmap {
 public:
  struct Slot {
    size_t chunk;
    size_t index;  // within the chunk, < slotsPerChunk
    bool operator==(const Slot& o) const { return chunk == o.chunk && index == o.index; }
  };

  /// Throws Error(InvalidUsage) for 0.
  explicit SlotBitmap(size_t slotsPerChunk);

  /// Adds a chunk of free slots; returns its index.
  size_t addChunk();
  /// Marks `run` free slots used, the first at a multiple of `run`, and returns the first: the lowest
  /// free slot for run 1; nullopt when there is no such run (add a chunk). `run` is a power of two up
  /// to 64, else Error(InvalidUsage).
  std::optional<Slot> allocate(size_t run = 1);
  /// Frees the `run` used slots that allocate(run) returned as `slot`. Throws Error(InvalidUsage) for
  /// slots out of range or not in use.
  void free(Slot slot, size_t run = 1);

  size_t slotsPerChunk() const { return slotsPerChunk_; }
  size_t chunks() const;
  size_t capacity() const;
  size_t inUse() const;

 private:
  size_t wordOf(Slot slot) const { return slot.chunk * wordsPerChunk_ + slot.index / 64; }

  const size_t slotsPerChunk_;
  const size_t wordsPerChunk_;
  mutable std::mutex mutex_;
  size_t chunks_ = 0;
  size_t inUse_ = 0;
  size_t hint_ = 0;                // summary word index: every word below hint_*64 is full
  std::vector<uint64_t> words_;    // bit set = slot used (or padding past a chunk's last slot)
  std::vector<uint64_t> summary_;  // bit set = that word is full (or does not exist yet)
};

struct TokenPoolStats {
  size_t chunks = 0;
  size_t capacity = 0;     // tokens available without growing
  size_t inUse = 0;        // tokens handed out and not yet returned
  size_t slotsInUse = 0;   // the slots they hold (16 for a token in its own cache line)
  size_t deviceBytes = 0;  // device memory of all chunks
};

/// Where a token sits relative to its neighbours.
enum class TokenPlacement {
  /// Next to other tokens: 8 bytes of the pool.
  Packed,
  /// Alone in its 128-byte cache line (the line's other slots stay unused): for a word that one GPU
  /// thread reads through its L1 cache, where neighbours' atomics and peers' writes would evict it.
  OwnCacheLine,
};

/// Zeroed 8-byte device words for semaphores, owned by a Context and shared by its semaphores.
/// Each chunk is its own exportable allocation (cuMem with POSIX fd, and fabric where usable; one
/// cudaMalloc chunk where VMM is not available), so a token registered for CudaIpc exports its chunk
/// and peers map each chunk once. Tokens never move. Thread-safe; tokens may be released from any
/// thread.
class TokenPool : public std::enable_shared_from_this<TokenPool> {
 public:
  /// A pool on `deviceId`. No device memory is touched before the first getToken. `tokensPerChunk`
  /// caps the tokens taken from each chunk (0: as many as fit; tests use small values to grow early).
  static std::shared_ptr<TokenPool> create(int deviceId, size_t tokensPerChunk = 0);

  ~TokenPool();
  TokenPool(const TokenPool&) = delete;
  TokenPool& operator=(const TokenPool&) = delete;

  /// A zeroed device word. Its deleter keeps the pool alive, zeroes the word and returns it; a word is
  /// never handed out again before that zeroing has completed. Grows the pool when it is full.
  std::shared_ptr<uint64_t> getToken(TokenPlacement placement = TokenPlacement::Packed);

  TokenPoolStats stats() const;
  int deviceId() const { return deviceId_; }

 private:
  struct Chunk;
  struct TokenDeleter;

  TokenPool(int deviceId, size_t tokensPerChunk);
  void addChunkLocked();
  void release(SlotBitmap::Slot slot, size_t run) noexcept;
  uint64_t* address(SlotBitmap::Slot slot) const;

  const int deviceId_;
  const size_t requestedTokensPerChunk_;
  mutable std::mutex mutex_;
  std::unique_ptr<SlotBitmap> bitmap_;  // made with the first chunk, whose size decides slots per chunk
  std::vector<std::unique_ptr<Chunk>> chunks_;
  struct ZeroStream;
  std::unique_ptr<ZeroStream> zeroStream_;  // zeroes returned tokens asynchronously
  uint64_t pendingZeroes_ = 0;              // memsets enqueued since the stream was last synchronized
  size_t tokensInUse_ = 0;
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_TOKEN_POOL_HPP_
