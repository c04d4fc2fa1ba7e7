// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Host logic of capture-time registration (src/ext/collectives/capture_registry.hpp): the ranks' vote on
// a captured call, the bookkeeping of exported and mapped allocations with its bound, the message that
// carries them, and MSCCLPP_COLL_CAPTURE_CACHE. The exchange itself needs GPUs and several processes
// (test/mp_unit/collectives_mp_test.cc, CaptureRegistration*).

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <mscclpp/errors.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/env_builder.hpp"
#include "common/invalid_usage.hpp"
#include "common/serialization.hpp"
#include "ext/collectives/capture_registry.hpp"

using namespace mscclpp::collectives;
using mscclpp::test::invalidUsage;

namespace {

AllocationIdentity allocation(uintptr_t base, size_t size, unsigned long long bufferId) {
  AllocationIdentity id;
  id.base = base;
  id.size = size;
  id.bufferId = bufferId;
  return id;
}

/// An offer of an all-reduce of `segBytes` on two buffers, by a rank that can take part.
CaptureOffer offer(Collective collective = Collective::AllReduce, uint64_t segBytes = 4 << 20, int32_t nBuffers = 2) {
  CaptureOffer o;
  o.collective = static_cast<int32_t>(collective);
  o.segBytes = segBytes;
  o.nBuffers = nBuffers;
  return o;
}

std::vector<char> encoded(uint64_t nGone, uint64_t nFresh) {
  CaptureMessage m;
  for (uint64_t i = 0; i < nGone; ++i) m.gone.push_back(allocation(0x1000 * (i + 1), 0x1000, i + 7));
  for (uint64_t i = 0; i < nFresh; ++i)
    m.fresh.emplace_back(allocation(0x100000 * (i + 1), 1 << 20, i + 70), std::vector<char>(13, 'm'));
  return encodeCaptureMessage(m);
}

}  // namespace

// ---- the vote ----

TEST(CaptureVerdict, EveryRankCanMeansNoReason) { EXPECT_EQ(captureVerdict({offer(), offer(), offer(), offer()}), ""); }

TEST(CaptureVerdict, OneRankThatCannotDecidesForEveryRankAndIsNamed) {
  std::vector<CaptureOffer> offers = {offer(), offer(), offer()};
  offers[2].refusal = static_cast<int32_t>(CaptureRefusal::CacheFull);
  const std::string verdict = captureVerdict(offers);
  EXPECT_NE(verdict.find("rank 2"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("MSCCLPP_COLL_CAPTURE_CACHE"), std::string::npos) << verdict;
}

TEST(CaptureVerdict, TheFirstRankThatCannotIsNamed) {
  std::vector<CaptureOffer> offers = {offer(), offer(), offer()};
  offers[1].refusal = static_cast<int32_t>(CaptureRefusal::NotShareable);
  offers[2].refusal = static_cast<int32_t>(CaptureRefusal::ExportFailed);
  const std::string verdict = captureVerdict(offers);
  EXPECT_EQ(verdict.rfind("rank 1 ", 0), 0u) << verdict;
  EXPECT_NE(verdict.find("not device memory"), std::string::npos) << verdict;
}

TEST(CaptureVerdict, EveryReasonHasItsOwnText) {
  std::set<std::string> texts;
  for (CaptureRefusal r : {CaptureRefusal::NotShareable, CaptureRefusal::OutsideAllocation, CaptureRefusal::CacheFull,
                           CaptureRefusal::ExportFailed}) {
    std::vector<CaptureOffer> offers = {offer(), offer()};
    offers[1].refusal = static_cast<int32_t>(r);
    texts.insert(captureVerdict(offers));
  }
  EXPECT_EQ(texts.size(), 4u);
}

TEST(CaptureVerdict, AnUnknownRefusalStillMeansCannot) {
  std::vector<CaptureOffer> offers = {offer(), offer()};
  offers[0].refusal = 99;
  const std::string verdict = captureVerdict(offers);
  EXPECT_NE(verdict.find("rank 0"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("unknown"), std::string::npos) << verdict;
}

TEST(CaptureVerdict, DifferentCollectivesAreInvalidUsageNamingBoth) {
  const std::string what = invalidUsage([] {
    captureVerdict({offer(Collective::AllReduce), offer(Collective::AllGather, 4 << 20, 2)});
  });
  EXPECT_NE(what.find("allreduce"), std::string::npos) << what;
  EXPECT_NE(what.find("allgather"), std::string::npos) << what;
  EXPECT_NE(what.find("same collectives in the same order"), std::string::npos) << what;
}

TEST(CaptureVerdict, DifferentSizesAreInvalidUsage) {
  const std::string what = invalidUsage([] {
    captureVerdict({offer(Collective::AllReduce, 4 << 20), offer(Collective::AllReduce, 4 << 20),
                    offer(Collective::AllReduce, 8 << 20)});
  });
  EXPECT_NE(what.find("rank 2"), std::string::npos) << what;
}

TEST(CaptureVerdict, DifferentBufferCountsAreInvalidUsage) {
  invalidUsage([] {
    captureVerdict({offer(Collective::AllToAll, 1 << 20, 2), offer(Collective::AllToAll, 1 << 20, 1)});
  });
}

TEST(CaptureVerdict, EvenADisagreementOfRanksThatCannotIsInvalidUsage) {
  // Which path a call takes must not hide that the ranks captured different calls.
  std::vector<CaptureOffer> offers = {offer(Collective::AllReduce), offer(Collective::Broadcast, 4 << 20, 1)};
  offers[0].refusal = static_cast<int32_t>(CaptureRefusal::NotShareable);
  invalidUsage([&] { captureVerdict(offers); });
}

TEST(CaptureVerdict, AnUnknownCollectiveIsDescribedNotIndexed) {
  CaptureOffer garbage = offer();
  garbage.collective = 1000;
  const std::string what = invalidUsage([&] { captureVerdict({offer(), garbage}); });
  EXPECT_NE(what.find("unknown collective"), std::string::npos) << what;
}

TEST(CaptureVerdict, NoBuffersOrMoreThanACallHasAreInvalidUsage) {
  invalidUsage([] {
    captureVerdict({offer(Collective::AllGather, 1 << 20, 0), offer(Collective::AllGather, 1 << 20, 0)});
  });
  invalidUsage([] {
    captureVerdict({offer(Collective::AllGather, 1 << 20, 3), offer(Collective::AllGather, 1 << 20, 3)});
  });
}

TEST(CaptureVerdict, NoOffersIsInvalidUsage) {
  invalidUsage([] { captureVerdict({}); });
}

// ---- the bookkeeping and its bound ----

TEST(CaptureCache, TwoBuffersOfOneAllocationAreExportedOnce) {
  CaptureCache cache(8);
  const AllocationIdentity a = allocation(0x10000, 1 << 20, 1);
  EXPECT_EQ(cache.unexported({a, a}), std::vector<AllocationIdentity>{a});
}

TEST(CaptureCache, AnExportedAllocationIsNotExportedAgain) {
  CaptureCache cache(8);
  const AllocationIdentity a = allocation(0x10000, 1 << 20, 1), b = allocation(0x200000, 1 << 20, 2);
  cache.addExport(a, mscclpp::RegisteredMemory());
  EXPECT_EQ(cache.unexported({a, b}), std::vector<AllocationIdentity>{b});
  EXPECT_EQ(cache.exports(), 1u);
}

TEST(CaptureCache, AnAllocationAtTheSameAddressWithANewBufferIdIsANewAllocation) {
  CaptureCache cache(8);
  cache.addExport(allocation(0x10000, 1 << 20, 1), mscclpp::RegisteredMemory());
  const AllocationIdentity again = allocation(0x10000, 1 << 20, 2);
  EXPECT_EQ(cache.unexported({again}), std::vector<AllocationIdentity>{again});
  cache.addMapping(1, allocation(0x10000, 1 << 20, 1), mscclpp::RegisteredMemory());
  EXPECT_EQ(cache.mapping(1, again), nullptr);
}

TEST(CaptureCache, ExportsFitUpToTheBound) {
  CaptureCache cache(2);
  EXPECT_TRUE(cache.fits(0, 2));
  EXPECT_FALSE(cache.fits(0, 3));
  cache.addExport(allocation(0x10000, 4096, 1), mscclpp::RegisteredMemory());
  EXPECT_TRUE(cache.fits(0, 1));
  cache.addExport(allocation(0x20000, 4096, 2), mscclpp::RegisteredMemory());
  EXPECT_TRUE(cache.fits(0, 0));
  EXPECT_FALSE(cache.fits(0, 1)) << "full";
  EXPECT_TRUE(cache.fits(1, 1)) << "an export that is gone makes room";
  EXPECT_FALSE(cache.fits(1, 2));
}

TEST(CaptureCache, ABoundOfZeroFitsNothing) {
  CaptureCache cache(0);
  EXPECT_FALSE(cache.fits(0, 1));
  EXPECT_FALSE(cache.fits(5, 1)) << "more retired than exported is no room either";
}

TEST(CaptureCache, GoneListsExportsFreedOrReplacedAtTheirAddress) {
  CaptureCache cache(8);
  const AllocationIdentity alive = allocation(0x10000, 4096, 1), freed = allocation(0x20000, 4096, 2),
                           replaced = allocation(0x30000, 4096, 3);
  for (const AllocationIdentity& id : {alive, freed, replaced}) cache.addExport(id, mscclpp::RegisteredMemory());
  const std::vector<AllocationIdentity> gone = cache.gone([&](uintptr_t base) {
    if (base == alive.base) return alive;
    if (base == replaced.base) return allocation(replaced.base, replaced.size, 9);
    return AllocationIdentity{};  // nothing there any more
  });
  EXPECT_EQ(gone, (std::vector<AllocationIdentity>{freed, replaced}));
}

TEST(CaptureCache, MappingsAreKeyedByPeerAndAllocation) {
  CaptureCache cache(8);
  const AllocationIdentity a = allocation(0x10000, 4096, 1), b = allocation(0x20000, 4096, 2);
  // Two peers may have allocations that look alike: each is its own mapping.
  cache.addMapping(1, a, mscclpp::RegisteredMemory());
  cache.addMapping(2, a, mscclpp::RegisteredMemory());
  cache.addMapping(2, b, mscclpp::RegisteredMemory());
  EXPECT_EQ(cache.mappings(), 3u);
  EXPECT_NE(cache.mapping(2, a), nullptr);
  EXPECT_NE(cache.mapping(2, b), nullptr);
  EXPECT_EQ(cache.mapping(3, a), nullptr) << "a peer that mapped nothing has no mapping";
  EXPECT_NE(cache.mapping(1, a), nullptr);
  EXPECT_EQ(cache.mapping(1, b), nullptr);
  cache.removeMapping(2, a);
  EXPECT_NE(cache.mapping(1, a), nullptr) << "the other peer's mapping stays";
  EXPECT_EQ(cache.mapping(2, a), nullptr);
  EXPECT_EQ(cache.mappings(), 2u);
}

TEST(CaptureCache, RemovingWhatIsNotThereChangesNothing) {
  CaptureCache cache(8);
  cache.addExport(allocation(0x10000, 4096, 1), mscclpp::RegisteredMemory());
  cache.removeExport(allocation(0x10000, 4096, 2));
  cache.removeMapping(1, allocation(0x10000, 4096, 1));
  EXPECT_EQ(cache.exports(), 1u);
  EXPECT_EQ(cache.mappings(), 0u);
}

// ---- the message ----

TEST(CaptureMessage, RoundTripsGoneAndNewAllocations) {
  CaptureMessage m;
  m.gone = {allocation(0x10000, 4096, 1), allocation(0x20000, 8192, 0)};
  m.fresh.emplace_back(allocation(0x400000, 2 << 20, 5), std::vector<char>{'a', 'b', 'c'});
  const CaptureMessage back = decodeCaptureMessage(encodeCaptureMessage(m));
  EXPECT_EQ(back.gone, m.gone);
  ASSERT_EQ(back.fresh.size(), 1u);
  EXPECT_EQ(back.fresh[0].first, m.fresh[0].first);
  EXPECT_EQ(back.fresh[0].second, m.fresh[0].second);
}

TEST(CaptureMessage, AnEmptyMessageRoundTrips) {
  const CaptureMessage back = decodeCaptureMessage(encodeCaptureMessage(CaptureMessage{}));
  EXPECT_TRUE(back.gone.empty());
  EXPECT_TRUE(back.fresh.empty());
}

TEST(CaptureMessage, EveryTruncationIsInvalidUsage) {
  const std::vector<char> whole = encoded(2, 2);
  for (size_t n = 0; n < whole.size(); ++n) {
    SCOPED_TRACE(n);
    invalidUsage([&] { decodeCaptureMessage(std::vector<char>(whole.begin(), whole.begin() + n)); });
  }
}

TEST(CaptureMessage, TrailingBytesAreInvalidUsage) {
  std::vector<char> bytes = encoded(1, 1);
  bytes.push_back('x');
  invalidUsage([&] { decodeCaptureMessage(bytes); });
}

TEST(CaptureMessage, AnAbsurdCountOfGoneAllocationsIsRefusedBeforeAnyAllocation) {
  mscclpp::ByteWriter w;
  w.put<uint64_t>(uint64_t{1} << 60).put<uint64_t>(0);
  const std::string what = invalidUsage([&] { decodeCaptureMessage(w.take()); });
  EXPECT_NE(what.find("do not fit"), std::string::npos) << what;
}

TEST(CaptureMessage, MoreNewAllocationsThanACallHasBuffersAreInvalidUsage) {
  const std::string what = invalidUsage([] { decodeCaptureMessage(encoded(0, kMaxCaptureBuffers + 1)); });
  EXPECT_NE(what.find("new allocations"), std::string::npos) << what;
}

TEST(CaptureMessage, AnOversizedMemoryIsInvalidUsage) {
  CaptureMessage m;
  m.fresh.emplace_back(allocation(0x400000, 2 << 20, 5), std::vector<char>(1 << 20, 'm'));
  invalidUsage([&] { decodeCaptureMessage(encodeCaptureMessage(m)); });
}

// ---- buffers and streams as this rank sees them ----

TEST(CaptureRegistry, AStreamThatIsNotCapturedIsNotCapturing) {
  // Without a driver the query fails, which counts as not capturing too.
  EXPECT_FALSE(CaptureRegistry::capturing(nullptr));
}

TEST(CaptureRegistry, NullOrEmptyBuffersAreNotShareable) {
  char byte = 0;
  EXPECT_NE(shareRefusal(nullptr, 64).find("null or empty"), std::string::npos);
  EXPECT_NE(shareRefusal(&byte, 0).find("null or empty"), std::string::npos);
}

TEST(CaptureRegistry, HostMemoryIsNotShareable) {
  std::vector<char> host(4096);
  EXPECT_NE(shareRefusal(host.data(), host.size()).find("not device memory"), std::string::npos);
}

// ---- the setting ----

namespace {
std::shared_ptr<mscclpp::Env> envWith(const std::string& value) {
  return mscclpp::EnvBuilder::fromMap({{"MSCCLPP_COLL_CAPTURE_CACHE", value}});
}
}  // namespace

TEST(CaptureCacheSetting, OnByDefaultWith256) { EXPECT_EQ(mscclpp::EnvBuilder::fromMap({})->collCaptureCache, 256); }

TEST(CaptureCacheSetting, ANumberSetsTheBound) {
  EXPECT_EQ(envWith("16")->collCaptureCache, 16);
  EXPECT_EQ(envWith("65536")->collCaptureCache, 65536);
  EXPECT_TRUE(mscclpp::EnvBuilder::problems(*envWith("16")).empty());
}

TEST(CaptureCacheSetting, ZeroTurnsCaptureTimeRegistrationOff) {
  const auto e = envWith("0");
  EXPECT_EQ(e->collCaptureCache, 0);
  EXPECT_TRUE(mscclpp::EnvBuilder::problems(*e).empty());
  EXPECT_FALSE(CaptureCache(static_cast<size_t>(e->collCaptureCache)).fits(0, 1));
}

TEST(CaptureCacheSetting, ABadValueKeepsTheDefaultAndIsReported) {
  for (const char* bad : {"lots", "12k", "", "-1", "65537", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    const auto e = envWith(bad);
    EXPECT_EQ(e->collCaptureCache, 256);
    EXPECT_NE(mscclpp::EnvBuilder::problems(*e).find("MSCCLPP_COLL_CAPTURE_CACHE"), std::string::npos);
  }
}
