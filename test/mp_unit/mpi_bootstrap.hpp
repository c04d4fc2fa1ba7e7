// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_MPI_BOOTSTRAP_HPP_
#define MSCCLPP_TEST_MPI_BOOTSTRAP_HPP_

#include <mpi.h>

#include <mscclpp/core.hpp>

namespace mscclpp::test {

/// A Bootstrap a user might write over MPI: it overrides only the seven virtuals, so it shows that
/// everything built on a Bootstrap works with subclasses of any origin.
class MpiBootstrap : public Bootstrap {
 public:
  MpiBootstrap() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nRanks_);
  }
  int getRank() const override { return rank_; }
  int getNranks() const override { return nRanks_; }
  int getNranksPerNode() const override { return nRanks_; }
  void send(void* data, int size, int peer, int tag) override {
    MPI_Send(data, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
  }
  void recv(void* data, int size, int peer, int tag) override {
    MPI_Recv(data, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  void allGather(void* allData, int size) override {
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, allData, size, MPI_BYTE, MPI_COMM_WORLD);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  using Bootstrap::recv;
  using Bootstrap::send;

 private:
  int rank_ = 0;
  int nRanks_ = 1;
};

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_MPI_BOOTSTRAP_HPP_
