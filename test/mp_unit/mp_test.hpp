// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_MP_TEST_HPP_
#define MSCCLPP_TEST_MP_TEST_HPP_

#include <gtest/gtest.h>
#include <mpi.h>

#include <iostream>
#include <memory>
#include <mscclpp/core.hpp>

namespace mscclpp::test {

/// Prints the failures of a non-zero rank, prefixed with the rank, so a failure on any rank is seen.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::cerr << "[rank " << rank_ << "] " << (result.file_name() ? result.file_name() : "?") << ":"
                << result.line_number() << ": Failure\n"
                << result.summary() << std::endl;
    }
  }

 private:
  int rank_;
};

/// Base of multi-process tests: every rank runs the same test body.
class MultiProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nRanks);
  }

  /// A TcpBootstrap of all ranks; rank 0 creates the UniqueId and MPI carries it to the others.
  std::shared_ptr<TcpBootstrap> makeBootstrap(int64_t timeoutSec = 30) {
    UniqueId id;
    if (rank == 0) id = TcpBootstrap::createUniqueId();
    MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
    auto bootstrap = std::make_shared<TcpBootstrap>(rank, nRanks);
    bootstrap->initialize(id, timeoutSec);
    return bootstrap;
  }

  /// Every rank agrees on whether to skip: if any rank lacks what the test needs, all skip.
  bool anyRank(bool condition) {
    int local = condition ? 1 : 0, any = 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any != 0;
  }

  int rank = 0;
  int nRanks = 1;
};

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_MP_TEST_HPP_
