// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/token_pool.hpp"

#include <algorithm>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "gpu/gpu_checks.hpp"

namespace mscclpp {

// ---- SlotBitmap ----

namespace {

constexpr uint64_t kFull = ~0ULL;

int lowestZeroBit(uint64_t word) { return __builtin_ctzll(~word); }

}  // namespace

SlotBitmap::SlotBitmap(size_t slotsPerChunk)
    : slotsPerChunk_(slotsPerChunk), wordsPerChunk_((slotsPerChunk + 63) / 64) {
  MSCCLPP_CHECK_USAGE(slotsPerChunk > 0, "SlotBitmap: a chunk needs at least one slot");
}

size_t SlotBitmap::addChunk() {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t firstWord = words_.size();
  words_.resize(firstWord + wordsPerChunk_, 0);
  // Bits past the chunk's last slot are marked used so that they are never handed out.
  const size_t padding = wordsPerChunk_ * 64 - slotsPerChunk_;
  if (padding) words_.back() = kFull << (64 - padding);
  // New summary words start "full" so that bits of words that do not exist yet are never chosen.
  summary_.resize((words_.size() + 63) / 64, kFull);
  for (size_t w = firstWord; w < words_.size(); ++w) {
    if (words_[w] != kFull) summary_[w / 64] &= ~(1ULL << (w % 64));
  }
  hint_ = std::min(hint_, firstWord / 64);
  return chunks_++;
}

namespace {

void checkRun(size_t run, const char* what) {
  MSCCLPP_CHECK_USAGE(run >= 1 && run <= 64 && (run & (run - 1)) == 0, what, ": a run of ", run,
                      " slots is not a power of two from 1 to 64");
}

uint64_t runMask(size_t run) { return run == 64 ? kFull : ((1ULL << run) - 1); }

}  // namespace

std::optional<SlotBitmap::Slot> SlotBitmap::allocate(size_t run) {
  checkRun(run, "SlotBitmap::allocate");
  std::lock_guard<std::mutex> lock(mutex_);
  if (run > 1) {
    // Aligned runs never straddle two words. A plain scan: runs are taken when semaphores are built,
    // not on a hot path.
    for (size_t w = hint_ * 64; w < words_.size(); ++w) {
      if (words_[w] == kFull) continue;
      for (size_t first = 0; first < 64; first += run) {
        const uint64_t mask = runMask(run) << first;
        if (words_[w] & mask) continue;
        words_[w] |= mask;
        if (words_[w] == kFull) summary_[w / 64] |= 1ULL << (w % 64);
        inUse_ += run;
        return Slot{w / wordsPerChunk_, (w % wordsPerChunk_) * 64 + first};
      }
    }
    return std::nullopt;
  }
  for (size_t s = hint_; s < summary_.size(); ++s) {
    if (summary_[s] == kFull) continue;
    const size_t w = s * 64 + lowestZeroBit(summary_[s]);
    const int bit = lowestZeroBit(words_[w]);
    words_[w] |= 1ULL << bit;
    if (words_[w] == kFull) summary_[s] |= 1ULL << (w % 64);
    hint_ = s;
    ++inUse_;
    return Slot{w / wordsPerChunk_, (w % wordsPerChunk_) * 64 + bit};
  }
  hint_ = summary_.size();
  return std::nullopt;
}

void SlotBitmap::free(Slot slot, size_t run) {
  checkRun(run, "SlotBitmap::free");
  std::lock_guard<std::mutex> lock(mutex_);
  MSCCLPP_CHECK_USAGE(slot.chunk < chunks_ && slot.index < slotsPerChunk_ && slot.index % run == 0 &&
                          slot.index + run <= wordsPerChunk_ * 64,
                      "SlotBitmap::free: slots ", slot.index, "+", run, " of chunk ", slot.chunk, " do not exist (",
                      chunks_, " chunks of ", slotsPerChunk_, ")");
  const size_t w = wordOf(slot);
  const uint64_t mask = runMask(run) << (slot.index % 64);
  MSCCLPP_CHECK_USAGE((words_[w] & mask) == mask, "SlotBitmap::free: slots ", slot.index, "+", run, " of chunk ",
                      slot.chunk, " are not in use (freed twice?)");
  words_[w] &= ~mask;
  summary_[w / 64] &= ~(1ULL << (w % 64));
  hint_ = std::min(hint_, w / 64);
  inUse_ -= run;
}

size_t SlotBitmap::chunks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_;
}

size_t SlotBitmap::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_ * slotsPerChunk_;
}

size_t SlotBitmap::inUse() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return inUse_;
}

// ---- TokenPool ----

namespace {

// The chunk size where cuMem is not available: the size of one cuMem granule on current GPUs.
constexpr size_t kFallbackChunkBytes = 2 << 20;

}  // namespace

/// One chunk of device memory, zeroed; its own allocation so that it is exported on its own.
struct TokenPool::Chunk {
  void* base = nullptr;
  size_t bytes = 0;
  bool cuMem = false;

  Chunk() = default;
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
  ~Chunk() {
    if (cuMem) {
      detail::gpuFreePhysical(base);
    } else {
      detail::gpuFree(base);
    }
  }
};

struct TokenPool::ZeroStream {
  CudaStreamWithFlags stream{cudaStreamNonBlocking};
};

struct TokenPool::TokenDeleter {
  std::shared_ptr<TokenPool> pool;
  SlotBitmap::Slot slot;
  size_t run;  // slots taken with the token
  void operator()(uint64_t*) const noexcept { pool->release(slot, run); }
};

namespace {

// Slots of one 128-byte cache line.
constexpr size_t kSlotsPerCacheLine = 128 / sizeof(uint64_t);

}  // namespace

std::shared_ptr<TokenPool> TokenPool::create(int deviceId, size_t tokensPerChunk) {
  MSCCLPP_CHECK_USAGE(deviceId >= 0, "TokenPool: device id ", deviceId, " is not a GPU");
  return std::shared_ptr<TokenPool>(new TokenPool(deviceId, tokensPerChunk));
}

TokenPool::TokenPool(int deviceId, size_t tokensPerChunk)
    : deviceId_(deviceId), requestedTokensPerChunk_(tokensPerChunk) {}

TokenPool::~TokenPool() {
  try {
    CudaDeviceGuard guard(deviceId_);
    // Returned tokens may still be being zeroed; their memory must outlive that.
    if (zeroStream_) MSCCLPP_CUDA_IGNORE(cudaStreamSynchronize(zeroStream_->stream));
  } catch (const BaseError& e) {
    LOG_WARN(MEM, "token pool on GPU ", deviceId_, ": shutting down: ", e.what());
  }
  zeroStream_.reset();
  if (!chunks_.empty()) {
    size_t bytes = 0;
    for (const auto& c : chunks_) bytes += c->bytes;
    LOG_INFO(MEM, "token pool on GPU ", deviceId_, " freed: ", chunks_.size(), " chunk(s), ", formatBytes(bytes),
             ", capacity ", bitmap_->capacity(), " tokens");
  }
}

void TokenPool::addChunkLocked() {
  const GpuCapabilities& caps = gpuCapabilities();
  MSCCLPP_CHECK_USAGE(deviceId_ < caps.deviceCount, "TokenPool: GPU ", deviceId_, " does not exist (",
                      caps.gpuAvailable() ? concat(caps.deviceCount, " GPU(s)") : caps.unavailableReason, ")");
  AvoidCudaGraphCaptureGuard captureGuard;
  CudaDeviceGuard deviceGuard(deviceId_);
  const DeviceCapabilities& dev = caps.devices[deviceId_];
  auto chunk = std::make_unique<Chunk>();
  if (dev.virtualMemoryManagement && dev.posixFdHandles) {
    try {
      // The granularity of exactly the properties gpuCallocPhysical allocates with (POSIX fd, plus
      // fabric where an allocation with it works), so the chunk is one granule.
      const size_t gran = detail::getCuAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
      chunk->base = detail::gpuCallocPhysical(gran, gran, gran);
      chunk->bytes = gran;
      chunk->cuMem = true;
    } catch (const BaseError& e) {
      LOG_WARN(MEM, "token pool on GPU ", deviceId_, ": a cuMem chunk failed (", e.what(),
               "); using cudaMalloc memory, exported through runtime IPC");
    }
  }
  if (!chunk->base) {
    chunk->base = detail::gpuCalloc(kFallbackChunkBytes);
    chunk->bytes = kFallbackChunkBytes;
    chunk->cuMem = false;
  }
  size_t tokens = chunk->bytes / sizeof(uint64_t);
  if (requestedTokensPerChunk_ > 0) tokens = std::min(tokens, requestedTokensPerChunk_);
  if (!bitmap_) bitmap_ = std::make_unique<SlotBitmap>(tokens);
  // Every chunk takes as many tokens as the first: later chunks are the same size (same properties).
  MSCCLPP_ASSERT(chunk->bytes / sizeof(uint64_t) >= bitmap_->slotsPerChunk(), "a token pool chunk of ", chunk->bytes,
                 " bytes is smaller than the first");
  chunks_.push_back(std::move(chunk));
  bitmap_->addChunk();
  const Chunk& added = *chunks_.back();
  LOG_INFO(MEM, "token pool on GPU ", deviceId_, ": chunk ", chunks_.size() - 1, " added (",
           added.cuMem ? "cuMem" : "cudaMalloc", ", ", formatBytes(added.bytes), " at ", added.base, "); chunks ",
           chunks_.size(), ", capacity ", bitmap_->capacity(), ", in use ", bitmap_->inUse());
}

uint64_t* TokenPool::address(SlotBitmap::Slot slot) const {
  return static_cast<uint64_t*>(chunks_[slot.chunk]->base) + slot.index;
}

std::shared_ptr<uint64_t> TokenPool::getToken(TokenPlacement placement) {
  const size_t run = placement == TokenPlacement::OwnCacheLine ? kSlotsPerCacheLine : 1;
  uint64_t* token = nullptr;
  SlotBitmap::Slot slot{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<SlotBitmap::Slot> found = bitmap_ ? bitmap_->allocate(run) : std::nullopt;
    if (!found) {
      addChunkLocked();
      MSCCLPP_CHECK_USAGE(run <= bitmap_->slotsPerChunk(), "TokenPool: a token in its own cache line takes ", run,
                          " slots, more than the ", bitmap_->slotsPerChunk(), " of each chunk of this pool");
      found = bitmap_->allocate(run);
      MSCCLPP_ASSERT(found, "a new token pool chunk has no free run of ", run, " slots");
    }
    slot = *found;
    if (pendingZeroes_ > 0) {
      // The slot may be one returned a moment ago: its zeroing must be done before it is handed out.
      try {
        AvoidCudaGraphCaptureGuard captureGuard;
        CudaDeviceGuard deviceGuard(deviceId_);
        MSCCLPP_CUDATHROW(cudaStreamSynchronize(zeroStream_->stream));
      } catch (...) {
        bitmap_->free(slot, run);
        throw;
      }
      pendingZeroes_ = 0;
    }
    token = address(slot);
    ++tokensInUse_;
  }
  // If making the shared_ptr throws, it calls the deleter, which returns the slot.
  return std::shared_ptr<uint64_t>(token, TokenDeleter{shared_from_this(), slot, run});
}

void TokenPool::release(SlotBitmap::Slot slot, size_t run) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    --tokensInUse_;
    AvoidCudaGraphCaptureGuard captureGuard;
    CudaDeviceGuard deviceGuard(deviceId_);
    if (!zeroStream_) zeroStream_ = std::make_unique<ZeroStream>();
    cudaError_t err = cudaMemsetAsync(address(slot), 0, sizeof(uint64_t), zeroStream_->stream);
    if (err != cudaSuccess) {
      cudaGetLastError();
      // A token that could not be zeroed keeps its old count: handing it out again would break the
      // next semaphore's arithmetic, so the slot is retired instead.
      LOG_WARN(MEM, "token pool on GPU ", deviceId_, ": zeroing a returned token failed (", cudaGetErrorName(err),
               "); the slot is retired");
      return;
    }
    // Only the token word needs zeroing: the other slots of a run are never handed out with it.
    ++pendingZeroes_;
    bitmap_->free(slot, run);
  } catch (const std::exception& e) {
    LOG_WARN(MEM, "token pool on GPU ", deviceId_, ": returning a token failed: ", e.what());
  }
}

TokenPoolStats TokenPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  TokenPoolStats s;
  s.chunks = chunks_.size();
  s.inUse = tokensInUse_;
  if (bitmap_) {
    s.capacity = bitmap_->capacity();
    s.slotsInUse = bitmap_->inUse();
  }
  for (const auto& c : chunks_) s.deviceBytes += c->bytes;
  return s;
}

}  // namespace mscclpp
