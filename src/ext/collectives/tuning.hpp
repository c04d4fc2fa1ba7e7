// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// A tuning table: the algorithm Auto runs, per collective, rank count, size band and registration,
// read from a file (Config::tuningFile, MSCCLPP_COLL_TUNING_FILE) that `mscclpp-coll-bench -T <file>`
// writes after timing every candidate. Rank 0 reads the file and every rank receives its text, so all
// ranks choose alike whatever their own filesystem holds. Pure host logic, tested without a GPU
// (test/unit/collectives_selection_test.cc).
//
// Format: one rule per line, `#` starts a comment, fields separated by blanks:
//   <collective> <ranks> <from bytes> <registration> <algorithm> [<blocks>]
// collective: a collectiveName (allreduce, allgather, ...); ranks: a rank count or `*` for any;
// from bytes: a decimal byte count of the segment (as selectAlgorithm takes it); registration:
// `registered`, `unregistered` or `any`; algorithm: ll, ll2, staged, zerocopy or ce; blocks, for
// zerocopy only: the most thread blocks a call launches, 1 to 1024 (capped by Config::maxBlocks).
// Zero-copy alone takes a block count: its tiling depends on nothing but the count, so a count timed
// on an object of that many blocks (what `-T` does) runs the same under a cap; the LL and staged
// tilings also depend on the scratch layout, which is sized for Config::maxBlocks.
// A call takes the matching rule with the largest `from bytes` not above its segment (the later line
// of equal ones); no rule: Auto's own table.

#ifndef MSCCLPP_EXT_COLLECTIVES_TUNING_HPP_
#define MSCCLPP_EXT_COLLECTIVES_TUNING_HPP_

#include <cstddef>
#include <cstdint>
#include <mscclpp/collectives.hpp>
#include <string>
#include <vector>

namespace mscclpp {
namespace collectives {

enum class Registration { Any, Registered, Unregistered };

struct TuningRule {
  Collective collective = Collective::AllReduce;
  int nRanks = 0;  // 0: any rank count
  size_t fromBytes = 0;
  Registration registration = Registration::Any;
  Algorithm algorithm = Algorithm::Auto;
  /// The most blocks a call launches, ZeroCopy only; 0: as many as its tiling takes.
  uint32_t blocks = 0;
};

struct TuningTable {
  std::vector<TuningRule> rules;

  /// The rule covering a call of `collective` with `segBytes` among `nRanks` ranks on registered
  /// buffers or not, or null where none does.
  const TuningRule* find(Collective collective, size_t segBytes, int nRanks, bool registered) const;
};

/// The rules of `text`. Throws Error(InvalidUsage) naming `origin` and the line for a line that is not a
/// rule (an unknown collective, registration or algorithm, a rank count below 2, a size that is not a
/// decimal number, a block count outside [1, 1024] or for an algorithm other than zerocopy, fields
/// missing or left over).
TuningTable parseTuningTable(const std::string& text, const std::string& origin);

/// `table` in the format parseTuningTable reads, one rule per line.
std::string formatTuningTable(const TuningTable& table);

/// The algorithm named as MSCCLPP_COLL_ALGO names it ("auto", "ll", "ll2", "staged", "zerocopy", "ce");
/// false for any other name.
bool algorithmFromName(const std::string& name, Algorithm& algorithm);

}  // namespace collectives
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COLLECTIVES_TUNING_HPP_
