// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Host logic of the collectives: configuration from the environment, the algorithm table, the cuts of
// messages into tiles and packets, the scratch layout, and the host reference the GPU tests compare
// against.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mscclpp/errors.hpp>
#include <set>
#include <string>

#include "common/collectives_reference.hpp"
#include "common/env_builder.hpp"
#include "ext/collectives/kernels.hpp"
#include "ext/collectives/layout.hpp"
#include "ext/collectives/selection.hpp"
#include "ext/collectives/tiling.hpp"
#include "ext/collectives/tuning.hpp"

using namespace mscclpp::collectives;
using mscclpp::collectives::DataType;
using mscclpp::collectives::ReduceOp;

namespace {

Config resolved(const std::map<std::string, std::string>& vars = {}, int ranksPerGpu = 1, Config c = {}) {
  return resolveConfig(c, ranksPerGpu, *mscclpp::EnvBuilder::fromMap(vars));
}

/// What Env reports about `vars` (empty when every value parsed).
std::string envProblems(const std::map<std::string, std::string>& vars) {
  return mscclpp::EnvBuilder::problems(*mscclpp::EnvBuilder::fromMap(vars));
}

}  // namespace

TEST(CollectivesConfig, DefaultsWithoutEnvironment) {
  const Config c = resolved();
  EXPECT_EQ(c.scratchBytes, size_t{64} << 20);  // the defaults env.hpp and docs/collectives.md state
  EXPECT_EQ(c.llMaxBytes, size_t{768} << 10);
  EXPECT_EQ(c.maxBlocks, kMaxBlocksPerLaunch);
  EXPECT_EQ(c.forceAlgorithm, Algorithm::Auto);
}

TEST(CollectivesConfig, BlocksShrinkWithRanksSharingTheGpu) {
  EXPECT_EQ(resolved({}, 2).maxBlocks, kResidentBlocksPerGpu / 2);
  EXPECT_EQ(resolved({}, 4).maxBlocks, kResidentBlocksPerGpu / 4);
  EXPECT_LE(resolved({}, 4).maxBlocks * 4, kResidentBlocksPerGpu);
  EXPECT_EQ(resolved({}, 200).maxBlocks, 1);
}

TEST(CollectivesConfig, EnvironmentSetsSizesWithSuffixes) {
  const Config c = resolved({{"MSCCLPP_COLL_SCRATCH_BYTES", "8M"},
                             {"MSCCLPP_COLL_LL_MAX_BYTES", "64K"},
                             {"MSCCLPP_COLL_MAX_BLOCKS", "7"},
                             {"MSCCLPP_COLL_ALGO", "staged"}});
  EXPECT_EQ(c.scratchBytes, 8u << 20);
  EXPECT_EQ(c.llMaxBytes, 64u << 10);
  EXPECT_EQ(c.maxBlocks, 7);
  EXPECT_EQ(c.forceAlgorithm, Algorithm::Staged);
}

TEST(CollectivesConfig, ExplicitFieldsWinOverEnvironment) {
  Config explicitConfig;
  explicitConfig.maxBlocks = 3;
  explicitConfig.forceAlgorithm = Algorithm::LLOneShot;
  const Config c = resolved({{"MSCCLPP_COLL_MAX_BLOCKS", "9"}, {"MSCCLPP_COLL_ALGO", "staged"}}, 1, explicitConfig);
  EXPECT_EQ(c.maxBlocks, 3);
  EXPECT_EQ(c.forceAlgorithm, Algorithm::LLOneShot);
}

TEST(CollectivesConfig, SizesTakeLowerCaseSuffixesAndHexadecimal) {
  const Config c = resolved({{"MSCCLPP_COLL_SCRATCH_BYTES", "2g"}, {"MSCCLPP_COLL_LL_MAX_BYTES", "0x100"}});
  EXPECT_EQ(c.scratchBytes, size_t{2} << 30);
  EXPECT_EQ(c.llMaxBytes, 256u);
}

// Env's rule for every variable: a value that does not parse is reported (a WARN under ENV) and the
// default is used.
TEST(CollectivesConfig, BadEnvironmentValuesAreReportedAndLeaveTheDefault) {
  const Config defaults = resolved();
  const std::map<std::string, std::string> bad[] = {
      {{"MSCCLPP_COLL_SCRATCH_BYTES", "lots"}}, {{"MSCCLPP_COLL_SCRATCH_BYTES", "16T"}},
      {{"MSCCLPP_COLL_LL_MAX_BYTES", "-5"}},    {{"MSCCLPP_COLL_MAX_BLOCKS", "0"}},
      {{"MSCCLPP_COLL_MAX_BLOCKS", "5000"}},    {{"MSCCLPP_COLL_MAX_BLOCKS", "many"}},
      {{"MSCCLPP_COLL_ALGO", "fast"}}};
  for (const auto& vars : bad) {
    const std::string& name = vars.begin()->first;
    EXPECT_NE(envProblems(vars).find(name), std::string::npos) << name << "=" << vars.begin()->second;
    const Config c = resolved(vars);
    EXPECT_EQ(c.scratchBytes, defaults.scratchBytes) << name;
    EXPECT_EQ(c.llMaxBytes, defaults.llMaxBytes) << name;
    EXPECT_EQ(c.maxBlocks, defaults.maxBlocks) << name;
    EXPECT_EQ(c.forceAlgorithm, defaults.forceAlgorithm) << name;
  }
}

TEST(CollectivesConfig, ExplicitMaxBlocksOutOfRangeIsRejected) {
  Config c;
  c.maxBlocks = 5000;
  EXPECT_THROW(resolved({}, 1, c), mscclpp::Error);
  c.maxBlocks = -1;
  EXPECT_THROW(resolved({}, 1, c), mscclpp::Error);
}

TEST(CollectivesSelection, SmallMessagesTakeLLLargeOnesStaged) {
  const Config c = resolved({}, 2);
  for (int n : {2, 3, 4, 8}) {
    const ScratchLayout l = makeScratchLayout(n, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
    EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, n, c, l, false), Algorithm::LLOneShot) << n;
    EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 16 << 10, n, c, l, false), Algorithm::LLOneShot) << n;
    EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 64 << 20, n, c, l, false), Algorithm::Staged) << n;
    const size_t edge = c.llMaxBytes / (n - 1);
    EXPECT_EQ(selectAlgorithm(Collective::AllGather, edge, n, c, l, false), Algorithm::LLOneShot) << n;
    EXPECT_EQ(selectAlgorithm(Collective::AllGather, edge + 1, n, c, l, false), Algorithm::Staged) << n;
  }
}

TEST(CollectivesSelection, CollectivesWithoutLLAlwaysStaged) {
  const Config c = resolved({{"MSCCLPP_COLL_ALGO", "ll"}});
  const ScratchLayout l = makeScratchLayout(4, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  for (Collective coll : {Collective::Broadcast, Collective::Reduce, Collective::AllToAllv, Collective::Gather,
                          Collective::Scatter, Collective::SendRecv}) {
    EXPECT_FALSE(variantsOf(coll).llOneShot);
    EXPECT_EQ(selectAlgorithm(coll, 8, 4, c, l, false), Algorithm::Staged) << collectiveName(coll);
  }
}

TEST(CollectivesSelection, ForcedLLFallsBackWhenTheSegmentDoesNotFit) {
  const Config c = resolved({{"MSCCLPP_COLL_ALGO", "ll"}});
  const ScratchLayout l = makeScratchLayout(2, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  const size_t capacity = l.llSlotPackets * 8 * l.maxBlocks;
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, capacity, 2, c, l, false), Algorithm::LLOneShot);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, capacity + 8 * l.maxBlocks, 2, c, l, false), Algorithm::Staged);
}

TEST(CollectivesSelection, SelectorIsAskedFirstAndAutoDefers) {
  Config c = resolved();
  const ScratchLayout l = makeScratchLayout(2, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  int asked = 0;
  c.selector = [&](Collective coll, size_t bytes, int n) {
    ++asked;
    return bytes == 8 ? Algorithm::Staged : Algorithm::Auto;
  };
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false), Algorithm::Staged);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 16, 2, c, l, false), Algorithm::LLOneShot);
  EXPECT_EQ(asked, 2);
}

// Below its band, a registered call selects what an unregistered one does; from the band up, Auto
// leaves scratch: zero-copy all-reduce from 512 KiB at 3 ranks or more and from 1 MiB at 2, zero-copy
// reduce-scatter from 1 MiB parts, zero-copy all-gather from 256 KiB parts at 3 ranks or more and from
// 1 MiB parts at 2, the copy engines for all-gather from 16 MiB parts at 2 ranks (SM copies at more)
// and broadcast from 8 MiB and all-to-all from 16 MiB parts. Unregistered calls never take either.
TEST(CollectivesSelection, AutoTakesZeroCopyAndCopyEnginesOnRegisteredBuffersFromTheirBands) {
  const Config c = resolved({}, 2);
  const size_t KiB = size_t{1} << 10, MiB = size_t{1} << 20;
  struct Band {
    Collective coll;
    size_t from;
    Algorithm algorithm;
  };
  for (int n : {2, 3, 4, 8}) {
    const Band bands[] = {{Collective::AllReduce,
                           n >= 4   ? 256 * KiB
                           : n == 3 ? 512 * KiB
                                    : MiB,
                           Algorithm::ZeroCopy},
                          {Collective::ReduceScatter, MiB, Algorithm::ZeroCopy},
                          {Collective::AllGather, n >= 3 ? 256 * KiB : MiB, Algorithm::ZeroCopy},
                          {Collective::Broadcast, 8 * MiB, Algorithm::CopyEngine},
                          {Collective::AllToAll, 16 * MiB, Algorithm::CopyEngine}};
    const ScratchLayout l = makeScratchLayout(n, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
    for (const Band& band : bands) {
      for (size_t bytes : {size_t{8}, c.llMaxBytes / (n - 1) + 1, band.from - 1}) {
        if (bytes >= band.from) continue;
        EXPECT_EQ(selectAlgorithm(band.coll, bytes, n, c, l, true), selectAlgorithm(band.coll, bytes, n, c, l, false))
            << collectiveName(band.coll) << " " << n << " " << bytes;
      }
      EXPECT_EQ(selectAlgorithm(band.coll, band.from, n, c, l, true), band.algorithm)
          << collectiveName(band.coll) << " " << n;
      for (size_t bytes : {band.from, size_t{64} * MiB}) {
        const Algorithm unregistered = selectAlgorithm(band.coll, bytes, n, c, l, false);
        EXPECT_NE(unregistered, Algorithm::ZeroCopy) << collectiveName(band.coll) << " " << n << " " << bytes;
        EXPECT_NE(unregistered, Algorithm::CopyEngine) << collectiveName(band.coll) << " " << n << " " << bytes;
      }
    }
    EXPECT_EQ(selectAlgorithm(Collective::AllGather, 16 * MiB - 1, n, c, l, true), Algorithm::ZeroCopy) << n;
    EXPECT_EQ(selectAlgorithm(Collective::AllGather, 16 * MiB, n, c, l, true),
              n == 2 ? Algorithm::CopyEngine : Algorithm::ZeroCopy)
        << n;
    EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 64 * MiB, n, c, l, true), Algorithm::ZeroCopy) << n;
    EXPECT_EQ(selectAlgorithm(Collective::Gather, 64 * MiB, n, c, l, true), Algorithm::Staged) << n;
  }
}

TEST(CollectivesSelection, CollectivesWithoutZeroCopyStayStagedOnRegisteredBuffers) {
  const Config c = resolved({{"MSCCLPP_COLL_ALGO", "zerocopy"}});
  const ScratchLayout l = makeScratchLayout(4, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  for (Collective coll : {Collective::Broadcast, Collective::Reduce, Collective::AllToAll, Collective::AllToAllv,
                          Collective::Gather, Collective::Scatter, Collective::SendRecv}) {
    EXPECT_FALSE(variantsOf(coll).zeroCopy);
    EXPECT_EQ(selectAlgorithm(coll, 1 << 20, 4, c, l, true), Algorithm::Staged) << collectiveName(coll);
  }
}

TEST(CollectivesSelection, ForcedZeroCopyNeedsRegisteredBuffers) {
  const Config c = resolved({{"MSCCLPP_COLL_ALGO", "zerocopy"}});
  EXPECT_EQ(c.forceAlgorithm, Algorithm::ZeroCopy);
  const ScratchLayout l = makeScratchLayout(2, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, true), Algorithm::ZeroCopy) << "forced at any size";
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false), Algorithm::Staged);
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 64 << 20, 2, c, l, false), Algorithm::Staged);
}

TEST(CollectivesSelection, ForcedStagedOrLLWinsOverRegistration) {
  const Config staged = resolved({{"MSCCLPP_COLL_ALGO", "staged"}});
  const ScratchLayout l = makeScratchLayout(2, staged.maxBlocks, staged.llMaxBytes, staged.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 64 << 20, 2, staged, l, true), Algorithm::Staged);
  const Config ll = resolved({{"MSCCLPP_COLL_ALGO", "ll"}});
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 4096, 2, ll, l, true), Algorithm::LLOneShot);
}

TEST(CollectivesSelection, MidSizedAllReducesTakeTwoShotLL) {
  for (int ranksPerGpu : {1, 2, 4}) {
    const Config c = resolved({}, ranksPerGpu);
    for (int n : {2, 3, 4, 8}) {
      const ScratchLayout l = makeScratchLayout(n, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
      const size_t edge = c.llMaxBytes / (n - 1);
      EXPECT_EQ(selectAlgorithm(Collective::AllReduce, edge + 1, n, c, l, false), Algorithm::LLTwoShot) << n;
      EXPECT_EQ(selectAlgorithm(Collective::AllReduce, kLLTwoShotMaxBytes, n, c, l, false), Algorithm::LLTwoShot)
          << n << " ranks, " << ranksPerGpu << " per GPU: the layout's LL slots hold the largest two-shot";
      EXPECT_EQ(selectAlgorithm(Collective::AllReduce, kLLTwoShotMaxBytes + 1, n, c, l, false), Algorithm::Staged) << n;
      EXPECT_EQ(selectAlgorithm(Collective::ReduceScatter, edge + 1, n, c, l, false), Algorithm::Staged) << n;
    }
  }
}

TEST(CollectivesSelection, ForcedTwoShotFallsBackWhereItCannotRun) {
  const Config c = resolved({{"MSCCLPP_COLL_ALGO", "ll2"}});
  EXPECT_EQ(c.forceAlgorithm, Algorithm::LLTwoShot);
  const ScratchLayout l = makeScratchLayout(2, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false), Algorithm::LLTwoShot) << "forced at any size";
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 1 << 20, 2, c, l, false), Algorithm::Staged);
  const size_t capacity = l.llSlotPackets * 8 * l.maxBlocks * 2;  // two chunks of full slots
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, capacity, 2, c, l, false), Algorithm::LLTwoShot);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, capacity + 16 * l.maxBlocks, 2, c, l, false), Algorithm::Staged);
}

TEST(CollectivesTiling, TwoShotChunksCoverTheMessageAndEveryBlockHasPackets) {
  for (int n : {2, 3, 4, 7}) {
    for (uint64_t bytes : {1ull, 7ull, 8ull, 1000ull, 4096ull, (1ull << 20) + 3, 2ull << 20}) {
      for (uint32_t maxBlocks : {1u, 5u, 32u, 64u}) {
        const PacketTiling t = twoShotTiling(bytes, n, maxBlocks);
        ASSERT_GE(t.nBlocks, 1u);
        ASSERT_LE(t.nBlocks, maxBlocks);
        EXPECT_GE(t.packets * 8 * n, bytes) << "the chunks cover the message";
        EXPECT_LT((t.packets - 1) * 8 * n, bytes) << "no chunk is padding only";
        for (uint32_t b = 0; b < t.nBlocks; ++b) ASSERT_LT(t.begin(b), t.end(b)) << "block " << b << " is empty";
        EXPECT_EQ(t.end(t.nBlocks - 1), t.packets);
      }
    }
  }
}

TEST(CollectivesSelection, ForcedCopyEnginesNeedRegisteredGathersBroadcastsOrAllToAlls) {
  const Config forced = resolved({{"MSCCLPP_COLL_ALGO", "ce"}});
  EXPECT_EQ(forced.forceAlgorithm, Algorithm::CopyEngine);
  const ScratchLayout l = makeScratchLayout(2, forced.maxBlocks, forced.llMaxBytes, forced.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 8, 2, forced, l, true), Algorithm::CopyEngine);
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 8, 2, forced, l, false), Algorithm::Staged);
  EXPECT_EQ(selectAlgorithm(Collective::AllToAll, 8, 2, forced, l, true), Algorithm::CopyEngine);
  EXPECT_EQ(selectAlgorithm(Collective::AllToAll, 8, 2, forced, l, false), Algorithm::Staged);
  for (Collective coll : {Collective::AllReduce, Collective::ReduceScatter, Collective::Reduce, Collective::AllToAllv,
                          Collective::Gather, Collective::Scatter, Collective::SendRecv}) {
    EXPECT_FALSE(variantsOf(coll).copyEngine);
    EXPECT_EQ(selectAlgorithm(coll, 1 << 20, 2, forced, l, true), Algorithm::Staged) << collectiveName(coll);
  }
}

// ---- tuning tables (tuning.hpp) ----

namespace {

/// The algorithm of the rule `t` has for a call, Auto where none covers it.
Algorithm tunedFor(const TuningTable& t, Collective c, size_t segBytes, int nRanks, bool registered) {
  const TuningRule* rule = t.find(c, segBytes, nRanks, registered);
  return rule ? rule->algorithm : Algorithm::Auto;
}

}  // namespace

TEST(CollectivesTuning, ARuleCoversItsBandForItsRanksAndRegistration) {
  const TuningTable t = parseTuningTable(
      "# written by mscclpp-coll-bench -T\n"
      "allreduce 4 0 any ll\n"
      "allreduce 4 65536 any ll2   # from 64 KiB\n"
      "allreduce 4 4194304 registered zerocopy\n"
      "allreduce * 1048576 any staged\n"
      "\n"
      "allgather 2 0 unregistered staged\n",
      "test");
  ASSERT_EQ(t.rules.size(), 5u);
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 8, 4, false), Algorithm::LLOneShot);
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 65535, 4, true), Algorithm::LLOneShot);
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 65536, 4, true), Algorithm::LLTwoShot);
  // The largest `from` not above the segment wins, whichever line it is on.
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 2 << 20, 4, true), Algorithm::Staged);
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 4 << 20, 4, true), Algorithm::ZeroCopy);
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 4 << 20, 4, false), Algorithm::Staged);
  // Other rank counts: only the `*` rule.
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 8, 2, false), Algorithm::Auto);
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 1 << 20, 8, false), Algorithm::Staged);
  EXPECT_EQ(tunedFor(t, Collective::AllGather, 8, 2, false), Algorithm::Staged);
  EXPECT_EQ(tunedFor(t, Collective::AllGather, 8, 2, true), Algorithm::Auto);
  EXPECT_EQ(tunedFor(t, Collective::Broadcast, 8, 2, false), Algorithm::Auto);
}

TEST(CollectivesTuning, OfEqualBandsTheLaterLineWins) {
  const TuningTable t = parseTuningTable("allreduce 2 0 any ll\nallreduce 2 0 any staged\n", "test");
  EXPECT_EQ(tunedFor(t, Collective::AllReduce, 8, 2, false), Algorithm::Staged);
}

TEST(CollectivesTuning, FormattedTablesParseBackToTheSameRules) {
  const TuningTable t = parseTuningTable(
      "alltoall * 16777216 registered ce\nreducescatter 3 1048576 unregistered staged\nbroadcast 2 0 any ll\n"
      "allgather 4 4194304 registered zerocopy 16\n",
      "test");
  const std::string text = formatTuningTable(t);
  EXPECT_EQ(text,
            "alltoall * 16777216 registered ce\nreducescatter 3 1048576 unregistered staged\nbroadcast 2 0 any ll\n"
            "allgather 4 4194304 registered zerocopy 16\n");
  EXPECT_EQ(formatTuningTable(parseTuningTable(text, "again")), text);
}

TEST(CollectivesTuning, ALineThatIsNotARuleIsRefusedWithItsLineNumber) {
  const std::pair<const char*, const char*> bad[] = {
      {"allreduce 2 0 any", "5 or 6 fields"},
      {"allreduce 2 0 any zerocopy 8 extra", "5 or 6 fields"},
      {"allreduce 2 0 any zerocopy 0", "block count '0'"},
      {"allreduce 2 0 any zerocopy 1025", "block count '1025'"},
      {"allreduce 2 0 any zerocopy many", "block count 'many'"},
      {"allreduce 2 0 any staged 8", "for zerocopy only, not staged"},
      {"allreduce 2 0 any ll 8", "for zerocopy only, not ll"},
      {"allsum 2 0 any ll", "unknown collective 'allsum'"},
      {"allreduce 1 0 any ll", "rank count '1'"},
      {"allreduce two 0 any ll", "rank count 'two'"},
      {"allreduce 2 64K any ll", "from bytes '64K'"},
      {"allreduce 2 -1 any ll", "from bytes '-1'"},
      {"allreduce 2 99999999999999999999 any ll", "from bytes"},
      {"allreduce 2 0 maybe ll", "registration 'maybe'"},
      {"allreduce 2 0 any fast", "algorithm 'fast'"},
      {"allreduce 2 0 any auto", "algorithm 'auto'"},
  };
  for (const auto& [line, fragment] : bad) {
    try {
      parseTuningTable(std::string("# first\nallreduce 2 0 any ll\n") + line + "\n", "t.txt");
      ADD_FAILURE() << "accepted: " << line;
    } catch (const mscclpp::Error& e) {
      EXPECT_EQ(e.getErrorCode(), mscclpp::ErrorCode::InvalidUsage) << line;
      const std::string what = e.what();
      EXPECT_NE(what.find("t.txt:3: "), std::string::npos) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
    }
  }
}

TEST(CollectivesTuning, SelectionAsksTheTableAfterSelectorAndForcedAndBeforeItsOwn) {
  const TuningTable t = parseTuningTable("allreduce * 0 any staged\nallgather * 0 registered zerocopy\n", "test");
  Config c = resolved();
  const ScratchLayout l = makeScratchLayout(2, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false), Algorithm::LLOneShot) << "no table";
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false, &t), Algorithm::Staged);
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 8, 2, c, l, true, &t), Algorithm::ZeroCopy);
  EXPECT_EQ(selectAlgorithm(Collective::Broadcast, 64 << 20, 2, c, l, true, &t), Algorithm::CopyEngine)
      << "uncovered calls keep Auto's own table";
  c.forceAlgorithm = Algorithm::LLOneShot;
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false, &t), Algorithm::LLOneShot);
  c.forceAlgorithm = Algorithm::Auto;
  c.selector = [](Collective, size_t, int) { return Algorithm::LLTwoShot; };
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 2, c, l, false, &t), Algorithm::LLTwoShot);
}

TEST(CollectivesTuning, AZeroCopyRuleGivesItsBlockCountToTheCall) {
  const TuningTable t = parseTuningTable(
      "allgather 4 0 registered zerocopy 16\nallgather 4 16777216 registered zerocopy\n"
      "allreduce 4 0 any zerocopy 8\n",
      "test");
  ASSERT_EQ(t.rules.size(), 3u);
  EXPECT_EQ(t.rules[0].blocks, 16u);
  EXPECT_EQ(t.rules[1].blocks, 0u) << "no count: the tiling's own";
  Config c = resolved();
  const ScratchLayout l = makeScratchLayout(4, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  uint32_t blocks = 99;
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 1 << 20, 4, c, l, true, &t, &blocks), Algorithm::ZeroCopy);
  EXPECT_EQ(blocks, 16u);
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 16 << 20, 4, c, l, true, &t, &blocks), Algorithm::ZeroCopy);
  EXPECT_EQ(blocks, 0u);
  // Where the tuned zero-copy falls back (unregistered buffers), the count goes with it.
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 1 << 20, 4, c, l, false, &t, &blocks), Algorithm::Staged);
  EXPECT_EQ(blocks, 0u);
  // A forced zero-copy is not the rule's: no count.
  c.forceAlgorithm = Algorithm::ZeroCopy;
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 1 << 20, 4, c, l, true, &t, &blocks), Algorithm::ZeroCopy);
  EXPECT_EQ(blocks, 0u);
  // Fewer than two ranks: Staged, no count.
  blocks = 5;
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 1 << 20, 1, c, l, true, &t, &blocks), Algorithm::Staged);
  EXPECT_EQ(blocks, 0u);
}

TEST(CollectivesTuning, ATunedAlgorithmFallsBackAsAForcedOneDoes) {
  const TuningTable t = parseTuningTable("allgather * 0 any zerocopy\nbroadcast * 0 any ll\n", "test");
  const Config c = resolved();
  const ScratchLayout l = makeScratchLayout(2, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllGather, 1 << 20, 2, c, l, false, &t), Algorithm::Staged)
      << "zero-copy needs registered buffers";
  EXPECT_EQ(selectAlgorithm(Collective::Broadcast, 8, 2, c, l, false, &t), Algorithm::Staged)
      << "broadcast has no LL variant";
}

TEST(CollectivesConfig, TheTuningFileComesFromTheEnvironmentUnlessSet) {
  EXPECT_EQ(resolved().tuningFile, "");
  EXPECT_EQ(resolved({{"MSCCLPP_COLL_TUNING_FILE", "/etc/t.txt"}}).tuningFile, "/etc/t.txt");
  Config c;
  c.tuningFile = "mine.txt";
  EXPECT_EQ(resolved({{"MSCCLPP_COLL_TUNING_FILE", "/etc/t.txt"}}, 1, c).tuningFile, "mine.txt");
}

TEST(CollectivesSelection, OneRankIsStaged) {
  const Config c = resolved();
  const ScratchLayout l = makeScratchLayout(1, c.maxBlocks, c.llMaxBytes, c.scratchBytes);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 8, 1, c, l, false), Algorithm::Staged);
  EXPECT_EQ(selectAlgorithm(Collective::AllReduce, 64 << 20, 1, c, l, true), Algorithm::Staged);
}

// ---- tiling ----

TEST(CollectivesTiling, TilesCoverEveryElementOnceAndAreWholeMultiplesOf16Bytes) {
  for (uint32_t es : {1u, 2u, 4u, 8u}) {
    for (uint64_t elems : {1ull, 3ull, 17ull, 1000ull, 4096ull, (1ull << 20) + 3, 40000000ull}) {
      for (uint32_t maxBlocks : {1u, 5u, 32u, 64u}) {
        const Tiling t = makeTiling(elems, es, maxBlocks, 256 << 10, 32 << 10);
        ASSERT_GE(t.nBlocks, 1u);
        ASSERT_LE(t.nBlocks, maxBlocks);
        ASSERT_EQ((t.tileElems * es) % 16, 0u);
        ASSERT_LE(t.tileElems * es, 256u << 10);
        uint64_t covered = 0, expectBegin = 0;
        for (uint64_t k = 0; k < t.rounds; ++k) {
          for (uint32_t b = 0; b < t.nBlocks; ++b) {
            const uint64_t begin = t.tileBegin(b, k), end = t.tileEnd(b, k);
            ASSERT_LE(begin, end);
            if (end > begin) {
              ASSERT_EQ(begin, expectBegin) << "tiles in (round, block) order must be contiguous";
              expectBegin = end;
            }
            covered += end - begin;
          }
        }
        ASSERT_EQ(covered, elems) << "es " << es << " elems " << elems << " blocks " << maxBlocks;
        // No block runs a whole round with nothing to move except in the last round.
        ASSERT_LT(t.tileBegin(0, t.rounds - 1), elems);
      }
    }
  }
}

TEST(CollectivesTiling, ZeroElementsNeedNoBlocks) {
  const Tiling t = makeTiling(0, 4, 8, 1 << 20, 32 << 10);
  EXPECT_EQ(t.nBlocks, 0u);
  EXPECT_EQ(t.rounds, 0u);
  EXPECT_EQ(makePacketTiling(0, 8, kLLPacketsPerBlock).nBlocks, 0u);
}

TEST(CollectivesTiling, AllReduceChunksCoverTheMessageAndStayAligned) {
  for (uint32_t es : {1u, 2u, 4u, 8u}) {
    for (uint64_t count : {1ull, 2ull, 7ull, 4096ull, 1000003ull}) {
      for (int n : {1, 2, 3, 4, 7}) {
        const uint64_t c = allReduceChunkElems(count, es, n);
        EXPECT_EQ((c * es) % 16, 0u);
        EXPECT_GE(c * n, count);
        const uint64_t fair = (count + n - 1) / n;
        EXPECT_LT(c - fair, 16u / es) << "the smallest 16-byte multiple that holds a fair share";
      }
    }
  }
}

TEST(CollectivesTiling, PacketsEveryBlockHasWork) {
  for (uint64_t bytes : {1ull, 7ull, 8ull, 9ull, 4096ull, 65537ull, 1ull << 20}) {
    for (uint32_t maxBlocks : {1u, 3u, 32u, 64u}) {
      const PacketTiling t = makePacketTiling(bytes, maxBlocks, kLLPacketsPerBlock);
      EXPECT_EQ(t.packets, (bytes + 7) / 8);
      EXPECT_LE(t.nBlocks, maxBlocks);
      EXPECT_EQ(t.end(t.nBlocks - 1), t.packets);
      for (uint32_t b = 0; b < t.nBlocks; ++b) EXPECT_LT(t.begin(b), t.end(b)) << bytes << " " << b;
    }
  }
}

TEST(CollectivesLayout, RegionsAndSlotsDoNotOverlap) {
  const ScratchLayout l = makeScratchLayout(3, 4, 64 << 10, 1 << 20);
  EXPECT_LE(l.flag(l.maxBlocks - 1, 2) + 8, l.llOffset);
  EXPECT_LE(l.llSlot(1, l.maxBlocks - 1, 2) + l.llSlotPackets * 16, l.stagedOffset);
  EXPECT_EQ(l.stagedSlot(1, l.maxBlocks - 1, 2) + l.stagedSlotBytes, l.totalBytes);
  std::set<uint64_t> starts;
  for (uint32_t h = 0; h < 2; ++h) {
    for (uint32_t b = 0; b < l.maxBlocks; ++b) {
      for (int s = 0; s < 3; ++s) {
        EXPECT_EQ(l.stagedSlot(h, b, s) % 256, 0u);
        EXPECT_EQ(l.llSlot(h, b, s) % 16, 0u);
        starts.insert(l.stagedSlot(h, b, s));
      }
    }
  }
  EXPECT_EQ(starts.size(), 2u * l.maxBlocks * 3);
  EXPECT_GE(l.llSlotPackets, ceilDiv(ceilDiv(64 << 10, 8), l.maxBlocks));
}

// ---- the host reference ----

namespace {
template <typename T>
T reduceOf(DataType type, ReduceOp::Kind op, std::vector<T> in, std::vector<T> scalars = {}) {
  std::vector<const void*> ptrs, scalarPtrs;
  for (const T& v : in) ptrs.push_back(&v);
  for (const T& v : scalars) scalarPtrs.push_back(&v);
  T out{};
  mscclpp::test::referenceReduce(type, op, ptrs, scalarPtrs, &out);
  return out;
}
}  // namespace

TEST(CollectivesReference, IntegersWrapInTheirWidth) {
  EXPECT_EQ(reduceOf<int8_t>(DataType::Int8, ReduceOp::Kind::Sum, {100, 100}), static_cast<int8_t>(-56));
  EXPECT_EQ(reduceOf<uint8_t>(DataType::Uint8, ReduceOp::Kind::Prod, {16, 17}), static_cast<uint8_t>(16));
  EXPECT_EQ(reduceOf<int32_t>(DataType::Int32, ReduceOp::Kind::Min, {3, -7, 2}), -7);
  EXPECT_EQ(reduceOf<uint32_t>(DataType::Uint32, ReduceOp::Kind::Max, {3, 0xffffffffu, 2}), 0xffffffffu);
  EXPECT_EQ(reduceOf<int64_t>(DataType::Int64, ReduceOp::Kind::Avg, {-7, 0}), -3);
  EXPECT_EQ(reduceOf<uint64_t>(DataType::Uint64, ReduceOp::Kind::Avg, {7, 0, 1}), 2u);
  EXPECT_EQ(reduceOf<int32_t>(DataType::Int32, ReduceOp::Kind::PreMulSum, {1, -2, 5}, {3, 3, 3}), 12);
}

TEST(CollectivesReference, PreMulSumScalesEachInputByItsRanksScalar) {
  // 1*2 + (-2)*3 + 5*(-1): each rank's own scalar on its own input.
  EXPECT_EQ(reduceOf<int32_t>(DataType::Int32, ReduceOp::Kind::PreMulSum, {2, -2, 5}, {1, 3, -1}), 2 - 6 - 5);
  EXPECT_EQ(reduceOf<float>(DataType::Float32, ReduceOp::Kind::PreMulSum, {1.f, 1.f}, {0.5f, 4.f}), 4.5f);
  // int8 products wrap in the element's width before the sum: 100 * 3 = 300 -> 44.
  EXPECT_EQ(reduceOf<int8_t>(DataType::Int8, ReduceOp::Kind::PreMulSum, {100, 1}, {3, 1}), static_cast<int8_t>(45));
}

TEST(CollectivesReference, PreMulSumRoundsEachScaledInputToTheType) {
  // e4m3 values between 16 and 32 are 2 apart: 3 * 7 = 21 rounds to 20 before 1 * 1 is added, and
  // 20 + 1 = 21 rounds to 20 again (summing unrounded, 21 + 1 = 22 would be exact).
  const __nv_fp8_e4m3 f =
      reduceOf<__nv_fp8_e4m3>(DataType::Fp8E4M3, ReduceOp::Kind::PreMulSum, {__nv_fp8_e4m3(3.f), __nv_fp8_e4m3(1.f)},
                              {__nv_fp8_e4m3(7.f), __nv_fp8_e4m3(1.f)});
  EXPECT_EQ(static_cast<float>(f), 20.f);
}

TEST(CollectivesReference, FloatsRoundOnceFromDouble) {
  EXPECT_EQ(reduceOf<float>(DataType::Float32, ReduceOp::Kind::Sum, {1.5f, 2.25f}), 3.75f);
  EXPECT_EQ(reduceOf<double>(DataType::Float64, ReduceOp::Kind::Avg, {1.0, 2.0}), 1.5);
  const __half h = reduceOf<__half>(DataType::Float16, ReduceOp::Kind::Max, {__float2half(-1.f), __float2half(2.f)});
  EXPECT_EQ(__half2float(h), 2.f);
  EXPECT_EQ(reduceOf<float>(DataType::Float32, ReduceOp::Kind::PreMulSum, {1.f, -3.f}, {2.f, 2.f}), -4.f);
  // 17 is not an e4m3 value: 1.0625 * 16 needs 4 mantissa bits; it rounds to 16.
  const __nv_fp8_e4m3 f =
      reduceOf<__nv_fp8_e4m3>(DataType::Fp8E4M3, ReduceOp::Kind::Sum, {__nv_fp8_e4m3(8.f), __nv_fp8_e4m3(9.f)});
  EXPECT_EQ(static_cast<float>(f), 16.f);
}

TEST(CollectivesReference, ToleranceIsZeroForIntegersAndOneUlpForFloats) {
  EXPECT_EQ(mscclpp::test::tolerance(DataType::Int32, 5), 0);
  // Halves between 2048 and 4096 are 2 apart: one unit in the last place passes, two do not.
  const __half a = __float2half(2048.f), b = __float2half(2050.f), c = __float2half(2052.f);
  EXPECT_TRUE(mscclpp::test::matches(DataType::Float16, &b, &a));
  EXPECT_FALSE(mscclpp::test::matches(DataType::Float16, &c, &a));
  const int32_t x = 4, y = 5;
  EXPECT_FALSE(mscclpp::test::matches(DataType::Int32, &x, &y));
}

TEST(CollectivesReference, InputsAreExactInEveryType) {
  for (int t = 0; t < NumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    std::vector<char> v = mscclpp::test::testInputs(type, 1, 64, 3);
    for (uint64_t i = 0; i < 64; ++i) {
      const double x = mscclpp::test::toDouble(type, v.data() + i * dataTypeSize(type));
      EXPECT_EQ(x, std::round(x));
      EXPECT_LE(std::fabs(x), 6);
    }
  }
}

namespace {

/// Fraction of positions where a and b (elements of 4 bytes) differ, a read `shift` elements ahead.
double differingFraction(const std::vector<char>& a, const std::vector<char>& b, size_t shift = 0) {
  const size_t n = a.size() / 4 - shift;
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ += std::memcmp(a.data() + (i + shift) * 4, b.data() + i * 4, 4) != 0;
  return static_cast<double>(differ) / static_cast<double>(n);
}

}  // namespace

TEST(CollectivesReference, InputsDifferBetweenPositionsRanksAndSeeds) {
  using mscclpp::test::testInputs;
  constexpr uint64_t kCount = 4096;
  // Seven values, each about as often: a position error is seen in about six cases out of seven.
  const std::vector<char> in = testInputs(DataType::Int32, 0, kCount, 1);
  std::vector<int> seen(7, 0);
  for (uint64_t i = 0; i < kCount; ++i) {
    int32_t x;
    std::memcpy(&x, in.data() + i * 4, 4);
    ASSERT_GE(x, -3);
    ASSERT_LE(x, 3);
    ++seen[x + 3];
  }
  for (int k = 0; k < 7; ++k) EXPECT_GT(seen[k], static_cast<int>(kCount / 7 / 2)) << "value " << k - 3;
  // No short period: the input shifted by 1..1024 elements differs from itself at most positions.
  for (size_t shift = 1; shift <= 1024; shift *= 2) EXPECT_GT(differingFraction(in, in, shift), 0.75) << shift;
  // Ranks and seeds give different inputs at most positions.
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      EXPECT_GT(
          differingFraction(testInputs(DataType::Float32, a, kCount, 3), testInputs(DataType::Float32, b, kCount, 3)),
          0.75)
          << "ranks " << a << " and " << b;
      EXPECT_GT(
          differingFraction(testInputs(DataType::Float32, 2, kCount, a), testInputs(DataType::Float32, 2, kCount, b)),
          0.75)
          << "seeds " << a << " and " << b;
    }
  }
  // An offset continues the same sequence.
  const std::vector<char> whole = testInputs(DataType::Float32, 1, 100, 9);
  const std::vector<char> tail = testInputs(DataType::Float32, 1, 60, 9, 40);
  EXPECT_EQ(std::memcmp(whole.data() + 40 * 4, tail.data(), 60 * 4), 0);
}

TEST(CollectivesReference, InputReductionEqualsTheReductionOfTheInputs) {
  using mscclpp::test::referenceReduce;
  using mscclpp::test::testInputs;
  constexpr uint64_t kCount = 300, kBase = 1000, kSeed = 17;
  const ReduceOp::Kind ops[] = {ReduceOp::Kind::Sum, ReduceOp::Kind::Prod, ReduceOp::Kind::Max,
                                ReduceOp::Kind::Min, ReduceOp::Kind::Avg,  ReduceOp::Kind::PreMulSum};
  // Up to the table's bound, and one rank count above it, where every position is reduced anew.
  const int rankCounts[] = {1, 2, 3, 4, mscclpp::test::TestInputReduction::kTabledRanks + 1};
  for (int t = 0; t < NumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    const size_t es = dataTypeSize(type);
    for (ReduceOp::Kind op : ops) {
      for (int n : rankCounts) {
        std::vector<std::vector<char>> inputs(n), scalars(n, std::vector<char>(es));
        std::vector<const void*> scalarOf(n), parts(n);
        for (int q = 0; q < n; ++q) {
          inputs[q] = testInputs(type, q, kCount, kSeed, kBase);
          mscclpp::test::fromDouble(type, q + 1.0, scalars[q].data());
          scalarOf[q] = scalars[q].data();
        }
        std::vector<char> want(kCount * es), got(kCount * es);
        for (uint64_t i = 0; i < kCount; ++i) {
          for (int q = 0; q < n; ++q) parts[q] = inputs[q].data() + i * es;
          referenceReduce(type, op, parts, scalarOf, want.data() + i * es);
        }
        mscclpp::test::TestInputReduction(type, op, n, kSeed, scalars).fill(kBase, kCount, got.data());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), kCount * es), 0)
            << dataTypeName(type) << " " << reduceOpName(op) << " " << n << " ranks";
      }
    }
  }
}

TEST(CollectivesReference, MismatchesCountsElementsOutsideTheTolerance) {
  using mscclpp::test::mismatches;
  std::vector<float> want(100, 1000.f), got = want;
  uint64_t first = 7;
  EXPECT_EQ(mismatches(DataType::Float32, got.data(), want.data(), 100, &first), 0u);
  EXPECT_EQ(first, 7u) << "untouched when nothing differs";
  got[40] = std::nextafter(1000.f, 2000.f);  // one unit in the last place: within the tolerance
  got[60] = -0.f;
  want[60] = 0.f;  // other bytes, the same value
  EXPECT_EQ(mismatches(DataType::Float32, got.data(), want.data(), 100, &first), 0u);
  got[50] = 1001.f;
  got[90] = 999.f;
  EXPECT_EQ(mismatches(DataType::Float32, got.data(), want.data(), 100, &first), 2u);
  EXPECT_EQ(first, 50u);
  const int32_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
  EXPECT_EQ(mismatches(DataType::Int32, a, b, 3, &first), 1u);
  EXPECT_EQ(first, 2u);
  EXPECT_EQ(mismatches(DataType::Int32, a, b, 2), 0u) << "only `count` elements are compared";
}

TEST(CollectivesTypes, SizesAndNamesFollowNccl) {
  EXPECT_EQ(static_cast<int>(DataType::Fp8E5M2), 11);
  EXPECT_EQ(dataTypeSize(DataType::Bfloat16), 2u);
  EXPECT_EQ(dataTypeSize(DataType::Uint64), 8u);
  EXPECT_STREQ(dataTypeName(DataType::Float16), "half");
  EXPECT_STREQ(reduceOpName(ReduceOp::Kind::PreMulSum), "premulsum");
}

TEST(CollectivesTypes, PreMulSumNeedsAScalar) {
  EXPECT_THROW(ReduceOp(ReduceOp::Kind::PreMulSum), mscclpp::Error);
  EXPECT_THROW(ReduceOp::preMulSumHost(nullptr, DataType::Float32), mscclpp::Error);
  EXPECT_THROW(ReduceOp::preMulSumDevice(nullptr), mscclpp::Error);
  const float s = 0.5f;
  const ReduceOp op = ReduceOp::preMulSumHost(&s, DataType::Float32);
  float back;
  std::memcpy(&back, &op.hostScalarBits, 4);
  EXPECT_EQ(back, 0.5f);
  EXPECT_EQ(op.residence, ReduceOp::ScalarResidence::Host);
}

// What the kernels receive: only PreMulSum asks each rank to scale its own input, with its scalar.
TEST(CollectivesReduceSpec, OnlyPreMulSumPreMultiplies) {
  for (ReduceOp::Kind kind :
       {ReduceOp::Kind::Sum, ReduceOp::Kind::Prod, ReduceOp::Kind::Max, ReduceOp::Kind::Min, ReduceOp::Kind::Avg}) {
    const ReduceSpec spec = makeReduceSpec(ReduceOp(kind));
    EXPECT_FALSE(spec.preMultiplies) << reduceOpName(kind);
    EXPECT_EQ(spec.average, kind == ReduceOp::Kind::Avg) << reduceOpName(kind);
  }
  EXPECT_EQ(makeReduceSpec(ReduceOp(ReduceOp::Kind::Avg)).kind, ReduceSpec::Kind::Sum);
  EXPECT_EQ(makeReduceSpec(ReduceOp(ReduceOp::Kind::Max)).kind, ReduceSpec::Kind::Max);

  const int32_t hostScalar = -3;
  const ReduceSpec host = makeReduceSpec(ReduceOp::preMulSumHost(&hostScalar, DataType::Int32));
  EXPECT_TRUE(host.preMultiplies);
  EXPECT_EQ(host.kind, ReduceSpec::Kind::Sum);
  EXPECT_FALSE(host.average);
  int32_t bits;
  std::memcpy(&bits, &host.scalarBits, sizeof(bits));
  EXPECT_EQ(bits, hostScalar);
  EXPECT_EQ(host.scalarPtr, nullptr);

  int deviceScalarStandIn = 0;  // only its address travels; nothing reads it on the host
  const ReduceSpec device = makeReduceSpec(ReduceOp::preMulSumDevice(&deviceScalarStandIn));
  EXPECT_TRUE(device.preMultiplies);
  EXPECT_EQ(device.scalarPtr, &deviceScalarStandIn);
}

TEST(CollectivesReduceSpec, AnOpWithoutItsScalarIsRefused) {
  ReduceOp broken;
  broken.kind = ReduceOp::Kind::PreMulSum;  // built by hand, without a factory: no scalar
  EXPECT_THROW(makeReduceSpec(broken), mscclpp::Error);
  broken.residence = ReduceOp::ScalarResidence::Device;
  EXPECT_THROW(makeReduceSpec(broken), mscclpp::Error);
  ReduceOp unknown;
  unknown.kind = static_cast<ReduceOp::Kind>(42);
  EXPECT_THROW(makeReduceSpec(unknown), mscclpp::Error);
}
