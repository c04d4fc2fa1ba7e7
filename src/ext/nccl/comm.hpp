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
#include <functional>
#include <map>
#include <memory>
#include <mscclpp/collectives.hpp>
#include <mscclpp/core.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "ext/common/tags.hpp"
#include "ext/nccl/config.hpp"
#include "ext/nccl/real_nccl.hpp"
#include "ext/nccl/status.hpp"

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

/// A registration, as ncclCommRegister (its void* handle) and ncclCommWindowRegister (ncclWindow_t)
/// hand it out. The communicator that made it owns it; a handle is only ever dereferenced after it was
/// found among that communicator's registrations.
struct ncclWindow_vidmem {
  enum class Kind { Local, Window };
  Kind kind;
  void* buff;
  size_t size;
  /// The real NCCL's handle of the same buffer (a void* of ncclCommRegister or an ncclWindow_t), when
  /// the communicator has a real one beside it.
  void* real;
};

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
  /// Set by ncclCommAbort and ncclCommRevoke.
  std::atomic<bool> aborted{false};

  std::mutex mutex;  // guards the fields below
  std::string lastError;
  /// Why asyncError is a failure: the failing call's message, which later calls repeat.
  std::string asyncFailure;
  std::map<int, mscclpp::nccl::PreMulSumOp> preMulSumOps;
  int nextPreMulSumOp = ncclNumOps;
  /// The registrations of ncclCommRegister and ncclCommWindowRegister, by handle.
  std::map<const void*, std::unique_ptr<ncclWindow_vidmem>> registrations;
  /// Tag for control messages on the bootstrap, advanced by every split and shrink.
  int controlTag = mscclpp::ext::kNcclControlTagBase;

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

/// Whether `comm` is a communicator of this library: not NULL, not destroyed, not the real NCCL's.
bool validComm(const ncclComm* comm);

/// What ncclCommGetAsyncError reports for `comm`: its own state (ncclInProgress while a nonblocking
/// call runs, then that call's result), and where that is ncclSuccess, the real communicator's.
ncclResult_t asyncState(ncclComm* comm);

/// ncclSuccess if `comm` can take a call of the API function `call`; else fails it as NCCL's
/// ncclCommEnsureReady does: a communicator still busy with a nonblocking init, split or finalize is
/// ncclInvalidArgument, one whose nonblocking call failed gives that failure's code; a revoked one
/// is ncclInvalidUsage, and NULL or a pointer that is not a communicator is ncclInvalidArgument.
ncclResult_t readyComm(ncclComm* comm, const char* call);

/// Runs `work` (which returns the call's result or throws) on the communicator's worker thread for
/// the API function `call` of a nonblocking communicator: the communicator reports ncclInProgress
/// until `work` ends, then its result. Waits for the previous worker first. Returns ncclInProgress.
ncclResult_t startAsync(ncclComm* comm, const char* call, std::function<ncclResult_t()> work);

/// Records a failure of the real NCCL in the API function `call`, with the real NCCL's own message.
void reportRealFailure(ncclComm* comm, const char* call, ncclResult_t result);

/// Calls the real NCCL's function `fn` (a field of RealNccl) of `comm`'s real communicator and returns
/// its result unchanged, so that the caller sees the real NCCL's own code; a failure is logged and
/// recorded for ncclGetLastError as a failure of the API function `call`.
template <class... Params, class... Args>
ncclResult_t callReal(ncclComm* comm, const char* call, ncclResult_t (*RealNccl::*fn)(Params...), Args&&... args) {
  const ncclResult_t result = (comm->realLib->*fn)(std::forward<Args>(args)...);
  if (result != ncclSuccess && result != ncclInProgress) reportRealFailure(comm, call, result);
  return result;
}

/// Records [buff, buff + size) as registered on `comm` and returns the handle, owned by `comm`.
/// `realHandle` is the real NCCL's registration of the same buffer, or null.
ncclWindow_vidmem* registerBuffer(ncclComm* comm, ncclWindow_vidmem::Kind kind, void* buff, size_t size,
                                  void* realHandle);

/// Takes the registration `handle` of `kind` off `comm` and hands it to the caller. Throws
/// Error(InvalidUsage) if `handle` is not a live registration of that kind on `comm` (deregistered
/// already, another communicator's, or not a handle at all); nothing is dereferenced before that.
std::unique_ptr<ncclWindow_vidmem> deregisterBuffer(ncclComm* comm, const void* handle, ncclWindow_vidmem::Kind kind);

}  // namespace mscclpp::nccl

#endif  // MSCCLPP_EXT_NCCL_COMM_HPP_
