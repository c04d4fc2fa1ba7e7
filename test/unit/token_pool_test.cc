// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/token_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mscclpp/errors.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <set>
#include <thread>
#include <vector>

#include "common/gpu_test.hpp"
#include "gpu/driver_api.hpp"
#include "memory/gpu_ipc_mem.hpp"

using namespace mscclpp;

// ---- the bitmap allocator (host only) ----

TEST(SlotBitmapTest, RejectsChunksWithoutSlots) { EXPECT_THROW(SlotBitmap(0), Error); }

TEST(SlotBitmapTest, IsEmptyUntilAChunkIsAdded) {
  SlotBitmap bitmap(64);
  EXPECT_EQ(bitmap.capacity(), 0u);
  EXPECT_FALSE(bitmap.allocate().has_value());
}

TEST(SlotBitmapTest, FillsInAddressOrderThenReportsFull) {
  SlotBitmap bitmap(130);  // not a multiple of 64: the padding bits must never come out
  EXPECT_EQ(bitmap.addChunk(), 0u);
  for (size_t i = 0; i < 130; ++i) {
    auto slot = bitmap.allocate();
    ASSERT_TRUE(slot.has_value()) << i;
    EXPECT_EQ(slot->chunk, 0u);
    EXPECT_EQ(slot->index, i);
  }
  EXPECT_FALSE(bitmap.allocate().has_value());
  EXPECT_EQ(bitmap.inUse(), 130u);
  EXPECT_EQ(bitmap.capacity(), 130u);
}

TEST(SlotBitmapTest, ReusesTheLowestFreedSlotFirst) {
  SlotBitmap bitmap(200);
  bitmap.addChunk();
  for (int i = 0; i < 200; ++i) bitmap.allocate();
  bitmap.free({0, 130});
  bitmap.free({0, 5});
  bitmap.free({0, 64});
  EXPECT_EQ(bitmap.allocate()->index, 5u);
  EXPECT_EQ(bitmap.allocate()->index, 64u);
  EXPECT_EQ(bitmap.allocate()->index, 130u);
  EXPECT_FALSE(bitmap.allocate().has_value());
}

TEST(SlotBitmapTest, FreeingEveryOtherSlotHandsThemBackInOrder) {
  SlotBitmap bitmap(256);
  bitmap.addChunk();
  for (int i = 0; i < 256; ++i) bitmap.allocate();
  for (size_t i = 0; i < 256; i += 2) bitmap.free({0, i});
  EXPECT_EQ(bitmap.inUse(), 128u);
  for (size_t i = 0; i < 256; i += 2) EXPECT_EQ(bitmap.allocate()->index, i);
  EXPECT_FALSE(bitmap.allocate().has_value());
}

TEST(SlotBitmapTest, FreeingAWholeWordAndAllSlotsWorks) {
  SlotBitmap bitmap(4096);
  bitmap.addChunk();
  for (int i = 0; i < 4096; ++i) bitmap.allocate();
  for (size_t i = 0; i < 4096; ++i) bitmap.free({0, i});
  EXPECT_EQ(bitmap.inUse(), 0u);
  for (size_t i = 0; i < 4096; ++i) EXPECT_EQ(bitmap.allocate()->index, i);
}

TEST(SlotBitmapTest, GrowsByChunksAndPrefersTheEarliestFreeSlot) {
  SlotBitmap bitmap(100);
  bitmap.addChunk();
  for (int i = 0; i < 100; ++i) bitmap.allocate();
  EXPECT_FALSE(bitmap.allocate().has_value());
  EXPECT_EQ(bitmap.addChunk(), 1u);
  EXPECT_EQ(bitmap.capacity(), 200u);
  auto first = bitmap.allocate();
  EXPECT_EQ(first->chunk, 1u);
  EXPECT_EQ(first->index, 0u);
  bitmap.free({0, 42});
  auto reused = bitmap.allocate();
  EXPECT_EQ(reused->chunk, 0u);
  EXPECT_EQ(reused->index, 42u);
  for (size_t i = 1; i < 100; ++i) {
    auto s = bitmap.allocate();
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->chunk, 1u);
    EXPECT_EQ(s->index, i);
  }
  EXPECT_FALSE(bitmap.allocate().has_value());
  EXPECT_EQ(bitmap.chunks(), 2u);
}

TEST(SlotBitmapTest, ManyChunksOfManyWords) {
  // More words than one summary word covers, across chunks whose words do not align with it.
  SlotBitmap bitmap(64 * 70 + 3);
  for (int c = 0; c < 3; ++c) bitmap.addChunk();
  std::set<std::pair<size_t, size_t>> seen;
  for (size_t i = 0; i < bitmap.capacity(); ++i) {
    auto s = bitmap.allocate();
    ASSERT_TRUE(s.has_value());
    ASSERT_LT(s->index, bitmap.slotsPerChunk());
    ASSERT_TRUE(seen.insert({s->chunk, s->index}).second);
  }
  EXPECT_FALSE(bitmap.allocate().has_value());
}

TEST(SlotBitmapTest, DoubleFreeIsRejected) {
  SlotBitmap bitmap(8);
  bitmap.addChunk();
  auto s = bitmap.allocate();
  bitmap.free(*s);
  EXPECT_THROW(bitmap.free(*s), Error);
  EXPECT_EQ(bitmap.inUse(), 0u);
}

TEST(SlotBitmapTest, FreeOutOfRangeIsRejected) {
  SlotBitmap bitmap(8);
  bitmap.addChunk();
  bitmap.allocate();
  EXPECT_THROW(bitmap.free({0, 8}), Error);
  EXPECT_THROW(bitmap.free({1, 0}), Error);
  EXPECT_EQ(bitmap.inUse(), 1u);
}

TEST(SlotBitmapTest, AnAlignedRunSkipsPartlyUsedGroupsAndLeavesItsSlotsOut) {
  SlotBitmap bitmap(128);
  bitmap.addChunk();
  ASSERT_EQ(bitmap.allocate()->index, 0u);  // slot 0 used: the first group of 16 is not free
  auto run = bitmap.allocate(16);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->index, 16u) << "the run starts at the next multiple of its length";
  EXPECT_EQ(bitmap.inUse(), 17u);
  // Single slots fill the gap below the run, then continue after it.
  for (size_t expected = 1; expected < 16; ++expected) EXPECT_EQ(bitmap.allocate()->index, expected);
  EXPECT_EQ(bitmap.allocate()->index, 32u);
  bitmap.free(*run, 16);
  EXPECT_EQ(bitmap.inUse(), 17u);
  EXPECT_EQ(bitmap.allocate()->index, 16u) << "freeing the run frees all of its slots";
}

TEST(SlotBitmapTest, RunsOfEveryLengthFillAChunkThenReportFull) {
  for (size_t run : {2, 4, 8, 16, 32, 64}) {
    SlotBitmap bitmap(256);
    bitmap.addChunk();
    for (size_t i = 0; i < 256 / run; ++i) {
      auto slot = bitmap.allocate(run);
      ASSERT_TRUE(slot.has_value()) << "run " << run << ", " << i;
      EXPECT_EQ(slot->index, i * run);
    }
    EXPECT_FALSE(bitmap.allocate(run).has_value()) << run;
    EXPECT_FALSE(bitmap.allocate().has_value()) << run;
    EXPECT_EQ(bitmap.inUse(), 256u);
  }
}

TEST(SlotBitmapTest, ARunNeverCoversTheChunksPaddingOrTwoChunks) {
  SlotBitmap bitmap(40);  // slots 32-39 form a partial group; 40-63 are padding
  bitmap.addChunk();
  bitmap.addChunk();
  EXPECT_EQ(bitmap.allocate(16)->index, 0u);
  EXPECT_EQ(bitmap.allocate(16)->index, 16u);
  auto third = bitmap.allocate(16);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->chunk, 1u) << "slots 32-47 of chunk 0 would include padding";
  EXPECT_EQ(third->index, 0u);
}

TEST(SlotBitmapTest, RunLengthsThatAreNotPowersOfTwoUpTo64AreRejected) {
  SlotBitmap bitmap(256);
  bitmap.addChunk();
  for (size_t run : {0, 3, 12, 128}) EXPECT_THROW(bitmap.allocate(run), Error) << run;
  auto slot = bitmap.allocate(16);
  ASSERT_TRUE(slot.has_value());
  EXPECT_THROW(bitmap.free(*slot, 3), Error);
  EXPECT_THROW(bitmap.free(SlotBitmap::Slot{0, 8}, 16), Error) << "not the start of a run";
  EXPECT_THROW(bitmap.free(SlotBitmap::Slot{0, 32}, 16), Error) << "not in use";
  bitmap.free(*slot, 16);
  EXPECT_THROW(bitmap.free(*slot, 16), Error) << "freed twice";
}

TEST(SlotBitmapTest, EightContendingThreadsNeverGetTheSameSlot) {
  constexpr size_t kSlotsPerChunk = 64;
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  SlotBitmap bitmap(kSlotsPerChunk);
  bitmap.addChunk();
  std::mutex growMutex;
  // owner[chunk * kSlotsPerChunk + index] is 1 while some thread holds the slot.
  std::vector<std::atomic<int>> owner(kSlotsPerChunk * 64);
  std::atomic<int> duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<SlotBitmap::Slot> held;
      for (int r = 0; r < kRounds; ++r) {
        if (held.size() < 100 && (r + t) % 3 != 0) {
          auto s = bitmap.allocate();
          if (!s) {
            std::lock_guard<std::mutex> lock(growMutex);
            if (!(s = bitmap.allocate())) {
              bitmap.addChunk();
              s = bitmap.allocate();
            }
          }
          if (!s) continue;
          if (owner[s->chunk * kSlotsPerChunk + s->index].exchange(1) != 0) ++duplicates;
          held.push_back(*s);
        } else if (!held.empty()) {
          SlotBitmap::Slot s = held[(r * 7) % held.size()];
          held.erase(held.begin() + (r * 7) % held.size());
          owner[s.chunk * kSlotsPerChunk + s.index].store(0);
          bitmap.free(s);
        }
      }
      for (const auto& s : held) {
        owner[s.chunk * kSlotsPerChunk + s.index].store(0);
        bitmap.free(s);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(duplicates.load(), 0);
  EXPECT_EQ(bitmap.inUse(), 0u);
  EXPECT_GE(bitmap.chunks(), 2u) << "threads holding up to 100 slots each must outgrow one chunk of 64";
}

// ---- the pool: what works without a GPU ----

TEST(TokenPoolTest, CreatingAPoolTouchesNoDeviceMemory) {
  auto pool = TokenPool::create(0);
  TokenPoolStats s = pool->stats();
  EXPECT_EQ(s.chunks, 0u);
  EXPECT_EQ(s.capacity, 0u);
  EXPECT_EQ(s.inUse, 0u);
  EXPECT_EQ(s.deviceBytes, 0u);
  EXPECT_EQ(pool->deviceId(), 0);
}

TEST(TokenPoolTest, NegativeDeviceIsRejected) { EXPECT_THROW(TokenPool::create(-1), Error); }

TEST(TokenPoolTest, GetTokenWithoutAGpuSaysWhy) {
  if (gpuCapabilities().gpuAvailable()) GTEST_SKIP() << "this machine has a GPU; the case is about one without";
  auto pool = TokenPool::create(0);
  try {
    pool->getToken();
    FAIL() << "no GPU, no token";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(e.what()).find("no usable GPU"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool->stats().inUse, 0u);
}

// ---- the pool on a GPU ----

namespace {

uint64_t readToken(const uint64_t* token) {
  uint64_t value = ~0ULL;
  EXPECT_EQ(cudaMemcpy(&value, token, sizeof(value), cudaMemcpyDeviceToHost), cudaSuccess);
  return value;
}

void writeToken(uint64_t* token, uint64_t value) {
  EXPECT_EQ(cudaMemcpy(token, &value, sizeof(value), cudaMemcpyHostToDevice), cudaSuccess);
}

CUdeviceptr allocationBase(const void* ptr) {
  CUdeviceptr base = 0;
  size_t size = 0;
  EXPECT_EQ(cu::cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(ptr)), CUDA_SUCCESS);
  return base;
}

}  // namespace

TEST(TokenPoolTest, TokensAreZeroedDeviceWordsOfOneGranule) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  auto a = pool->getToken();
  auto b = pool->getToken();
  EXPECT_EQ(detail::gpuIdFromAddress(a.get()), 0);
  EXPECT_EQ(readToken(a.get()), 0u);
  EXPECT_EQ(readToken(b.get()), 0u);
  EXPECT_EQ(b.get(), a.get() + 1) << "tokens are packed";
  TokenPoolStats s = pool->stats();
  EXPECT_EQ(s.chunks, 1u);
  EXPECT_EQ(s.inUse, 2u);
  EXPECT_EQ(s.capacity, s.deviceBytes / sizeof(uint64_t));
  const DeviceCapabilities& dev = gpuCapabilities().devices[0];
  if (dev.virtualMemoryManagement && dev.posixFdHandles) {
    EXPECT_TRUE(isCuMemMapAllocated(a.get()));
    EXPECT_EQ(s.deviceBytes, detail::getCuAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  }
}

TEST(TokenPoolTest, AnOwnCacheLineTokenIsAloneInAnAlignedLine) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  auto packed = pool->getToken();
  auto alone = pool->getToken(TokenPlacement::OwnCacheLine);
  auto next = pool->getToken();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(alone.get()) % 128, 0u);
  EXPECT_EQ(readToken(alone.get()), 0u);
  EXPECT_TRUE(next.get() < alone.get() || next.get() >= alone.get() + 16) << "no other token shares its line";
  EXPECT_EQ(pool->stats().inUse, 3u);
  EXPECT_EQ(pool->stats().slotsInUse, 18u) << "the token holds its line's 16 slots";
  writeToken(alone.get(), 7);
  alone.reset();
  EXPECT_EQ(pool->stats().inUse, 2u);
  EXPECT_EQ(pool->stats().slotsInUse, 2u);
  auto again = pool->getToken(TokenPlacement::OwnCacheLine);
  EXPECT_EQ(readToken(again.get()), 0u) << "a recycled token must not keep its old count";
}

TEST(TokenPoolTest, AnOwnCacheLineTokenFromChunksSmallerThanALineIsRefused) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0, 8);
  EXPECT_THROW(pool->getToken(TokenPlacement::OwnCacheLine), Error);
  EXPECT_NE(pool->getToken(), nullptr) << "packed tokens still work";
}

TEST(TokenPoolTest, AReturnedTokenComesBackZeroed) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  auto keep = pool->getToken();
  auto token = pool->getToken();
  uint64_t* address = token.get();
  writeToken(address, 12345);
  ASSERT_EQ(readToken(address), 12345u);
  token.reset();
  EXPECT_EQ(pool->stats().inUse, 1u);
  auto again = pool->getToken();
  EXPECT_EQ(again.get(), address) << "the lowest free slot is reused";
  EXPECT_EQ(readToken(again.get()), 0u) << "a recycled token must not keep its old count";
}

TEST(TokenPoolTest, ManyReturnedTokensAreAllZeroedBeforeReuse) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  std::vector<std::shared_ptr<uint64_t>> tokens;
  for (int i = 0; i < 256; ++i) {
    tokens.push_back(pool->getToken());
    writeToken(tokens.back().get(), 1000 + i);
  }
  tokens.clear();
  for (int i = 0; i < 256; ++i) {
    tokens.push_back(pool->getToken());
    EXPECT_EQ(readToken(tokens.back().get()), 0u) << i;
  }
}

TEST(TokenPoolTest, GrowsPastOneChunkWithoutMovingTokens) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0, 64);
  std::vector<std::shared_ptr<uint64_t>> tokens;
  for (int i = 0; i < 64; ++i) tokens.push_back(pool->getToken());
  std::vector<uint64_t*> addresses;
  for (auto& t : tokens) addresses.push_back(t.get());
  EXPECT_EQ(pool->stats().chunks, 1u);
  tokens.push_back(pool->getToken());
  TokenPoolStats s = pool->stats();
  EXPECT_EQ(s.chunks, 2u);
  EXPECT_EQ(s.capacity, 128u);
  EXPECT_EQ(s.inUse, 65u);
  for (size_t i = 0; i < addresses.size(); ++i) EXPECT_EQ(tokens[i].get(), addresses[i]);
  EXPECT_NE(allocationBase(tokens[64].get()), allocationBase(tokens[0].get()))
      << "each chunk is its own allocation, exported on its own";
  EXPECT_EQ(readToken(tokens[64].get()), 0u);
}

TEST(TokenPoolTest, AFullGranuleOfTokensThenOneMoreGrowsTheRealPool) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  std::vector<std::shared_ptr<uint64_t>> tokens;
  tokens.push_back(pool->getToken());
  const size_t perChunk = pool->stats().capacity;
  ASSERT_GT(perChunk, 0u);
  for (size_t i = 1; i < perChunk; ++i) tokens.push_back(pool->getToken());
  EXPECT_EQ(pool->stats().chunks, 1u);
  tokens.push_back(pool->getToken());
  EXPECT_EQ(pool->stats().chunks, 2u);
  EXPECT_EQ(pool->stats().inUse, perChunk + 1);
}

TEST(TokenPoolTest, ATokenKeepsItsPoolAlive) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  std::weak_ptr<TokenPool> weak = pool;
  auto token = pool->getToken();
  pool.reset();
  EXPECT_FALSE(weak.expired());
  writeToken(token.get(), 7);
  EXPECT_EQ(readToken(token.get()), 7u);
  token.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(TokenPoolTest, FreeingThePoolReturnsItsDeviceMemory) {
  MSCCLPP_REQUIRE_GPU();
  // Other tests run on the same GPU at the same time, so free-memory figures say nothing here; instead
  // check that no allocation is mapped any more where the pool's chunks were.
  std::vector<void*> chunkAddresses;
  for (int i = 0; i < 20; ++i) {
    auto pool = TokenPool::create(0, 16);
    std::vector<std::shared_ptr<uint64_t>> tokens;
    for (int t = 0; t < 40; ++t) tokens.push_back(pool->getToken());  // three chunks
    for (int t = 0; t < 40; t += 16) chunkAddresses.push_back(tokens[t].get());
    EXPECT_EQ(pool->stats().chunks, 3u);
  }
  for (void* address : chunkAddresses) {
    CUmemGenericAllocationHandle handle;
    CUresult result = cu::cuMemRetainAllocationHandle(&handle, address);
    if (result == CUDA_SUCCESS) {
      cu::cuMemRelease(handle);
      // The address may have been reused by a later pool of this test; only a live pool's chunk may
      // be there, and every pool is gone now.
      ADD_FAILURE() << "an allocation is still mapped at " << address;
    }
  }
}

TEST(TokenPoolTest, ThreadsGettingAndReturningTokensNeverShareOne) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0, 128);
  std::mutex mutex;
  std::set<uint64_t*> live;
  std::atomic<int> duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
      std::vector<std::shared_ptr<uint64_t>> held;
      for (int r = 0; r < 300; ++r) {
        if (held.size() < 40 && r % 3 != 2) {
          auto token = pool->getToken();
          std::lock_guard<std::mutex> lock(mutex);
          if (!live.insert(token.get()).second) ++duplicates;
          held.push_back(std::move(token));
        } else if (!held.empty()) {
          {
            std::lock_guard<std::mutex> lock(mutex);
            live.erase(held.back().get());
          }
          held.pop_back();
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      for (auto& h : held) live.erase(h.get());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(duplicates.load(), 0);
  EXPECT_EQ(pool->stats().inUse, 0u);
}

TEST(TokenPoolTest, TokensOfOneChunkShareOneExport) {
  MSCCLPP_REQUIRE_GPU();
  auto pool = TokenPool::create(0);
  auto a = pool->getToken();
  auto b = pool->getToken();
  auto exportA = GpuIpcExport::create(a.get(), sizeof(uint64_t));
  auto exportB = GpuIpcExport::create(b.get(), sizeof(uint64_t));
  EXPECT_EQ(exportA->handle().allocationId, exportB->handle().allocationId);
  EXPECT_EQ(exportA->handle().baseSize, pool->stats().deviceBytes);
  EXPECT_EQ(exportB->handle().offsetFromBase, exportA->handle().offsetFromBase + sizeof(uint64_t));
  const DeviceCapabilities& dev = gpuCapabilities().devices[0];
  if (dev.virtualMemoryManagement && dev.posixFdHandles) {
    EXPECT_TRUE(exportA->handle().typeFlags & GpuIpcMemHandle::PosixFd) << exportA->exportLog();
    EXPECT_EQ(exportA->handle().posixFd.fdId, exportB->handle().posixFd.fdId) << "one fd per chunk";
  } else {
    EXPECT_TRUE(exportA->handle().typeFlags & GpuIpcMemHandle::RuntimeIpc) << exportA->exportLog();
  }
}
