// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The non-virtual parts of Bootstrap: built only on the seven virtuals, so they work unchanged over a
// user's own subclass (MPI, a key-value store) as well as over TcpBootstrap.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mscclpp/core.hpp>

#include "common/checks.hpp"

namespace mscclpp {

namespace {

// Lengths above this are refused before anything is allocated: no control-plane message is that large,
// so such a length means a mismatched send/recv pair or corrupted bytes.
constexpr uint64_t kMaxVectorBytes = uint64_t(1) << 30;

}  // namespace

void Bootstrap::groupBarrier(const std::vector<int>& ranks) {
  const int self = getRank();
  const int nRanks = getNranks();
  std::vector<int> group(ranks);
  std::sort(group.begin(), group.end());
  MSCCLPP_CHECK_USAGE(std::adjacent_find(group.begin(), group.end()) == group.end(), "groupBarrier on rank ", self,
                      ": a rank is listed twice");
  for (int r : group) {
    MSCCLPP_CHECK_USAGE(r >= 0 && r < nRanks, "groupBarrier on rank ", self, ": rank ", r, " is outside 0..",
                        nRanks - 1);
  }
  MSCCLPP_CHECK_USAGE(std::binary_search(group.begin(), group.end(), self), "groupBarrier on rank ", self,
                      ": this rank is not in the group");
  if (group.size() == 1) return;

  // The lowest rank collects one message from every member, then releases them all: 2(n-1) messages,
  // and every member knows all others have arrived once it hears back.
  const int leader = group.front();
  int32_t token = 0;
  if (self == leader) {
    for (size_t i = 1; i < group.size(); ++i) recv(&token, sizeof(token), group[i], 0);
    for (size_t i = 1; i < group.size(); ++i) send(&token, sizeof(token), group[i], 0);
  } else {
    send(&token, sizeof(token), leader, 0);
    recv(&token, sizeof(token), leader, 0);
  }
}

void Bootstrap::send(const std::vector<char>& data, int peer, int tag) {
  MSCCLPP_CHECK_USAGE(data.size() <= kMaxVectorBytes, "Bootstrap::send to rank ", peer, " tag ", tag, ": ", data.size(),
                      " bytes is over the ", kMaxVectorBytes, "-byte limit of a vector message");
  uint64_t size = data.size();
  send(&size, sizeof(size), peer, tag);
  send(const_cast<char*>(data.data()), static_cast<int>(size), peer, tag);
}

void Bootstrap::recv(std::vector<char>& data, int peer, int tag) {
  uint64_t size = 0;
  recv(&size, sizeof(size), peer, tag);
  MSCCLPP_CHECK_USAGE(size <= kMaxVectorBytes, "Bootstrap::recv from rank ", peer, " tag ", tag,
                      ": the announced length ", size, " is over the ", kMaxVectorBytes,
                      "-byte limit of a vector message (mismatched send/recv or corrupted bytes)");
  data.resize(size);
  recv(data.data(), static_cast<int>(size), peer, tag);
}

}  // namespace mscclpp
