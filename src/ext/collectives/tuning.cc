// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/collectives/tuning.hpp"

#include <sstream>

#include "common/checks.hpp"

namespace mscclpp {
namespace collectives {

namespace {

constexpr Collective kCollectives[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                       Collective::Broadcast, Collective::Reduce,    Collective::AllToAll,
                                       Collective::AllToAllv, Collective::Gather,    Collective::Scatter,
                                       Collective::SendRecv};
constexpr Registration kRegistrations[] = {Registration::Any, Registration::Registered, Registration::Unregistered};
constexpr Algorithm kAlgorithms[] = {Algorithm::Auto,     Algorithm::LLOneShot, Algorithm::Staged,
                                     Algorithm::ZeroCopy, Algorithm::LLTwoShot, Algorithm::CopyEngine};

const char* registrationName(Registration registration) {
  switch (registration) {
    case Registration::Any:
      return "any";
    case Registration::Registered:
      return "registered";
    case Registration::Unregistered:
      return "unregistered";
  }
  return "any";
}

/// The value of `values` that `nameOf` calls `name`; false where none is.
template <typename E, size_t N>
bool fromName(const std::string& name, const E (&values)[N], const char* (*nameOf)(E), E& value) {
  for (E v : values) {
    if (name == nameOf(v)) {
      value = v;
      return true;
    }
  }
  return false;
}

/// A decimal number without sign, suffix or overflow.
bool decimal(const std::string& text, size_t& value) {
  if (text.empty() || text.size() > 19) return false;
  value = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return false;
    value = value * 10 + static_cast<size_t>(ch - '0');
  }
  return true;
}

}  // namespace

bool algorithmFromName(const std::string& name, Algorithm& algorithm) {
  return fromName(name, kAlgorithms, algorithmName, algorithm);
}

const TuningRule* TuningTable::find(Collective collective, size_t segBytes, int nRanks, bool registered) const {
  const TuningRule* best = nullptr;
  for (const TuningRule& rule : rules) {
    if (rule.collective != collective || (rule.nRanks != 0 && rule.nRanks != nRanks)) continue;
    if (rule.registration != Registration::Any && (rule.registration == Registration::Registered) != registered) {
      continue;
    }
    if (rule.fromBytes > segBytes) continue;
    if (best == nullptr || rule.fromBytes >= best->fromBytes) best = &rule;
  }
  return best;
}

TuningTable parseTuningTable(const std::string& text, const std::string& origin) {
  TuningTable table;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    if (f.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    MSCCLPP_CHECK_USAGE(f.size() == 5 || f.size() == 6, where,
                        "a rule has 5 or 6 fields (collective, ranks, from bytes, registration, algorithm, ",
                        "and for zerocopy optionally blocks), this line ", f.size());
    TuningRule rule;
    MSCCLPP_CHECK_USAGE(fromName(f[0], kCollectives, collectiveName, rule.collective), where, "unknown collective '",
                        f[0], "'");
    if (f[1] != "*") {
      size_t ranks = 0;
      MSCCLPP_CHECK_USAGE(decimal(f[1], ranks) && ranks >= 2 && ranks <= 1024, where, "rank count '", f[1],
                          "' is neither * nor a number from 2 to 1024");
      rule.nRanks = static_cast<int>(ranks);
    }
    MSCCLPP_CHECK_USAGE(decimal(f[2], rule.fromBytes), where, "from bytes '", f[2], "' is not a decimal byte count");
    MSCCLPP_CHECK_USAGE(fromName(f[3], kRegistrations, registrationName, rule.registration), where, "registration '",
                        f[3], "' is not registered, unregistered or any");
    MSCCLPP_CHECK_USAGE(algorithmFromName(f[4], rule.algorithm) && rule.algorithm != Algorithm::Auto, where,
                        "algorithm '", f[4], "' is not ll, ll2, staged, zerocopy or ce");
    if (f.size() == 6) {
      size_t blocks = 0;
      MSCCLPP_CHECK_USAGE(decimal(f[5], blocks) && blocks >= 1 && blocks <= 1024, where, "block count '", f[5],
                          "' is not a number from 1 to 1024");
      MSCCLPP_CHECK_USAGE(rule.algorithm == Algorithm::ZeroCopy, where, "a block count is for zerocopy only, not ",
                          f[4], " (its tiling also depends on the scratch layout)");
      rule.blocks = static_cast<uint32_t>(blocks);
    }
    table.rules.push_back(rule);
  }
  return table;
}

std::string formatTuningTable(const TuningTable& table) {
  std::ostringstream out;
  for (const TuningRule& rule : table.rules) {
    out << collectiveName(rule.collective) << ' ';
    if (rule.nRanks == 0) {
      out << '*';
    } else {
      out << rule.nRanks;
    }
    out << ' ' << rule.fromBytes << ' ' << registrationName(rule.registration) << ' ' << algorithmName(rule.algorithm);
    if (rule.blocks != 0) out << ' ' << rule.blocks;
    out << '\n';
  }
  return out.str();
}

}  // namespace collectives
}  // namespace mscclpp
