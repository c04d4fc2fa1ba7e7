// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Entry point of the multi-process suites. MPI starts the ranks and gives each its rank; the library
// under test bootstraps itself over TCP, with MPI only carrying the UniqueId.

#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "mp_unit/child_process.hpp"
#include "mp_unit/mp_test.hpp"

int main(int argc, char** argv) {
  // A process a test started to play a peer (child_process.hpp) runs its role instead of the tests.
  const int childStatus = mscclpp::test::runChildRoleIfAsked();
  if (childStatus >= 0) return childStatus;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One XML report per rank: tools/test.sh counts a test failed if it failed on any rank.
  std::vector<char*> args(argv, argv + argc);
  std::string outputFlag;
  if (const char* dir = std::getenv("MSCCLPP_TEST_RESULTS_DIR")) {
    outputFlag = std::string("--gtest_output=xml:") + dir + "/rank" + std::to_string(rank) + ".xml";
    args.push_back(outputFlag.data());
  }
  int gtestArgc = static_cast<int>(args.size());
  args.push_back(nullptr);
  ::testing::InitGoogleTest(&gtestArgc, args.data());
  if (rank != 0) {
    // Keep one rank's progress output; failures of every rank are still printed.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new mscclpp::test::FailurePrinter(rank));
  }
  int result = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
