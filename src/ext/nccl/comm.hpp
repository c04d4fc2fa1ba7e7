// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The communicator behind ncclComm_t. It owns a TcpBootstrap and a Communicator over it, the
// collectives object that runs our kernels, and, when a real NCCL is available and usable for this
// set of ranks, a communicator of the real NCCL made alongside (same ranks, same devices) for the
// operations we do not do ourselves.

#ifndef MSCCLPP_EXT_NCCL_COMM_HPP_
#define MSCCLPP_EXT_NCCL_COMM_HPP_

#include <mscclpp/nccl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mscclpp/collectives.hpp>
#include <mscclpp/core.hpp>
#include <mutex>
#include <string>
#include <thread>

#include "ext/nccl/config.hpp"
#include "ext/nccl/real_nccl.hpp"

namespace mscclpp::nccl {

/// How a new communicator finds its peers.
struct JoinSpec {
  int rank = 0;
  int nRanks = 1;
  mscclpp::UniqueId id{};
  int cudaDev = 0;
  CommConfig config;
};

/// A PreMulSum operator made by ncclRedOpCreatePreMulSum: valid for one data type.
struct PreMulSumOp {
  ncclDataType_t type;
  collectives::ReduceOp op;
  /// The real NCCL's operator of the same meaning, when the communicator has a real one.
  ncclRedOp_t realOp = ncclSum;
};

}  // namespace mscclpp::nccl

struct ncclComm {
  static constexpr uint64_t kMagic = 0x6d7363636c6e636cULL;  // "msccl" "ncl"
  static constexpr uint64_t kDestroyed = 0xdeadc0117;

  uint64_t magic = kMagic;
  int rank = 0;
  int nRanks = 1;
  int cudaDev = 0;
  mscclpp::nccl::CommConfig config;
  std::shared_ptr<mscclpp::TcpBootstrap> bootstrap;
  std::shared_ptr<mscclpp::Communicator> communicator;
  std::unique_ptr<mscclpp::collectives::Collectives> collectives;
  /// Why `collectives` is null, for the message of an operation that cannot run.
  std::string collectivesProblem;
  const mscclpp::nccl::RealNccl* realLib = nullptr;
  ncclComm_t real = nullptr;
  /// Why `real` is null.
  std::string realProblem;

  /// ncclInProgress while a nonblocking init, split or finalize runs; then its result.
  std::atomic<ncclResult_t> asyncError{ncclSuccess};
  std::thread worker;
  std::atomic<bool> aborted{false};

  std::mutex mutex;  // guards the fields below
  std::string lastError;
  std::map<int, mscclpp::nccl::PreMulSumOp> preMulSumOps;
  int nextPreMulSumOp = ncclNumOps;
  /// Tag for control messages on the bootstrap, advanced by every split and shrink.
  int controlTag = 0x4e43434c;

  ncclComm() = default;
  ncclComm(const ncclComm&) = delete;
  ncclComm& operator=(const ncclComm&) = delete;
  ~ncclComm();

  bool isValid() const { return magic == kMagic; }
  /// Waits for a nonblocking init or split still running.
  void join();
};

namespace mscclpp::nccl {

/// Joins the group `spec` names on the calling thread; throws on failure. The communicator of the
/// real NCCL is made alongside when one is available and every rank is on its own GPU (NCCL refuses
/// two ranks on one GPU; we run those ourselves).
void joinComm(ncclComm* comm, const JoinSpec& spec);

/// Whether `comm` runs `kind` itself (false: forward to comm->real, which exists), or throws
/// Error(InvalidUsage) when neither is possible.
bool runsOnOurs(ncclComm* comm, collectives::Collective kind);

}  // namespace mscclpp::nccl

#endif  // MSCCLPP_EXT_NCCL_COMM_HPP_
