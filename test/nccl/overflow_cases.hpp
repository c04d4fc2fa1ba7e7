// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Calls of every NCCL operation whose buffer sizes cannot be counted in size_t: a count whose byte
// size (count x 4 for float) wraps, for every operation, and, with several ranks, a count whose byte
// size fits but whose count x ranks x 4 wraps, for the operations with a buffer of count per rank;
// and calls whose byte size fits in size_t but is above the 2^56 bytes a buffer of one call may hold
// (beyond any GPU's memory; sizes derived from larger ones could wrap inside the library).
// Every one must be refused with ncclInvalidArgument. Shared by the tests without a GPU
// (nccl_api_test.cc) and on the GPU (nccl_mp_test.cc).

#ifndef MSCCLPP_TEST_NCCL_OVERFLOW_CASES_HPP_
#define MSCCLPP_TEST_NCCL_OVERFLOW_CASES_HPP_

#include <mscclpp/nccl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mscclpp::test {

struct OverflowCase {
  /// The API function, as the last error names it.
  std::string call;
  size_t count;
  std::function<ncclResult_t(ncclComm_t, cudaStream_t)> run;
};

/// The cases for `rank` of a communicator of `nRanks`; `buf` stands for every buffer (it is never
/// read: the calls must fail before).
inline std::vector<OverflowCase> overflowCases(int rank, int nRanks, void* buf) {
  const int root = nRanks - 1;
  const int peer = (rank + 1) % nRanks;
  auto forCount = [&](size_t n, bool onlyPerRank) {
    std::vector<OverflowCase> cases;
    auto add = [&](const char* call, std::function<ncclResult_t(ncclComm_t, cudaStream_t)> run) {
      cases.push_back({call, n, std::move(run)});
    };
    const ncclDataType_t f32 = ncclFloat32;
    add("ncclAllGather", [=](ncclComm_t c, cudaStream_t s) { return ncclAllGather(buf, buf, n, f32, c, s); });
    add("ncclReduceScatter",
        [=](ncclComm_t c, cudaStream_t s) { return ncclReduceScatter(buf, buf, n, f32, ncclSum, c, s); });
    add("ncclAlltoAll", [=](ncclComm_t c, cudaStream_t s) { return ncclAlltoAll(buf, buf, n, f32, c, s); });
    add("ncclGather", [=](ncclComm_t c, cudaStream_t s) { return ncclGather(buf, buf, n, f32, root, c, s); });
    add("ncclScatter", [=](ncclComm_t c, cudaStream_t s) { return ncclScatter(buf, buf, n, f32, root, c, s); });
    if (onlyPerRank) return cases;
    add("ncclAllReduce", [=](ncclComm_t c, cudaStream_t s) { return ncclAllReduce(buf, buf, n, f32, ncclSum, c, s); });
    add("ncclBroadcast", [=](ncclComm_t c, cudaStream_t s) { return ncclBroadcast(buf, buf, n, f32, root, c, s); });
    // ncclBcast is ncclBroadcast in place, and is reported as it.
    add("ncclBroadcast", [=](ncclComm_t c, cudaStream_t s) { return ncclBcast(buf, n, f32, root, c, s); });
    add("ncclReduce", [=](ncclComm_t c, cudaStream_t s) { return ncclReduce(buf, buf, n, f32, ncclSum, root, c, s); });
    add("ncclSend", [=](ncclComm_t c, cudaStream_t s) { return ncclSend(buf, n, f32, peer, c, s); });
    add("ncclRecv", [=](ncclComm_t c, cudaStream_t s) { return ncclRecv(buf, n, f32, peer, c, s); });
    return cases;
  };
  // count x 4 bytes wraps.
  std::vector<OverflowCase> cases = forCount(SIZE_MAX / 4 + 1, false);
  if (nRanks > 1) {
    // count x 4 fits, count x nRanks x 4 wraps.
    std::vector<OverflowCase> perRank = forCount(SIZE_MAX / (4 * static_cast<size_t>(nRanks)) + 1, true);
    cases.insert(cases.end(), perRank.begin(), perRank.end());
  }
  // count x 4 fits in size_t but is 4 bytes more than 2^56.
  std::vector<OverflowCase> aboveLimit = forCount((size_t{1} << 56) / 4 + 1, false);
  cases.insert(cases.end(), aboveLimit.begin(), aboveLimit.end());
  return cases;
}

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_NCCL_OVERFLOW_CASES_HPP_
