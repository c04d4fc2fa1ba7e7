// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/nccl/comm.hpp"

#include <cstring>
#include <mscclpp/env.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <vector>

#include "common/checks.hpp"
#include "common/identity.hpp"
#include "common/logger.hpp"

namespace mscclpp::nccl {

namespace {

/// What each rank tells the others at init: where it runs.
struct RankInfo {
  uint64_t hostHash;
  char busId[32];
};

bool ranksShareAGpu(const std::vector<RankInfo>& infos) {
  for (size_t i = 0; i < infos.size(); ++i) {
    for (size_t j = i + 1; j < infos.size(); ++j) {
      if (infos[i].hostHash == infos[j].hostHash && std::strcmp(infos[i].busId, infos[j].busId) == 0) return true;
    }
  }
  return false;
}

bool forcedToReal(collectives::Collective kind) {
  const std::string& list = env()->forceNcclFallbackOperation;
  if (list.empty()) return false;
  if (list == "all") return true;
  const std::string name = collectives::collectiveName(kind);
  for (const std::string& item : splitList(list)) {
    if (item == name) return true;
  }
  return false;
}

void makeRealComm(ncclComm* comm, const std::vector<RankInfo>& infos) {
  comm->realLib = realNccl();
  if (comm->realLib == nullptr) {
    comm->realProblem = realNcclProblem();
    return;
  }
  if (ranksShareAGpu(infos)) {
    comm->realProblem = "ranks of this communicator share a GPU, which NCCL refuses";
    LOG_INFO(NCCL, "rank ", comm->rank, ": ", comm->realProblem, "; no NCCL communicator alongside");
    return;
  }
  ncclUniqueId realId{};
  if (comm->rank == 0) {
    ncclResult_t res = comm->realLib->GetUniqueId(&realId);
    if (res != ncclSuccess) {
      // The broadcast still runs, so the other ranks learn of the failure instead of waiting.
      std::memset(&realId, 0, sizeof(realId));
      LOG_WARN(NCCL, "ncclGetUniqueId of the NCCL at ", comm->realLib->path,
               " failed: ", comm->realLib->GetErrorString(res));
    }
  }
  comm->bootstrap->broadcast(&realId, sizeof(realId), 0);
  const ncclUniqueId zero{};
  if (std::memcmp(&realId, &zero, sizeof(zero)) == 0) {
    comm->realProblem = "rank 0 could not make an id for the NCCL communicator alongside";
    return;
  }
  ncclConfig_t config = comm->config.realConfig();
  ncclResult_t res = comm->realLib->CommInitRankConfig(&comm->real, comm->nRanks, realId, comm->rank, &config);
  if (res != ncclSuccess) {
    comm->real = nullptr;
    comm->realProblem = concat("the NCCL at ", comm->realLib->path,
                               " failed to make its communicator: ", comm->realLib->GetErrorString(res), ": ",
                               comm->realLib->GetLastError(nullptr));
    LOG_WARN(NCCL, "rank ", comm->rank, ": ", comm->realProblem);
  }
}

}  // namespace

void joinComm(ncclComm* comm, const JoinSpec& spec) {
  comm->rank = spec.rank;
  comm->nRanks = spec.nRanks;
  comm->cudaDev = spec.cudaDev;
  comm->config = spec.config;
  CudaDeviceGuard deviceGuard(spec.cudaDev);

  comm->bootstrap = std::make_shared<TcpBootstrap>(spec.rank, spec.nRanks);
  comm->bootstrap->initialize(spec.id);
  comm->communicator = std::make_shared<Communicator>(comm->bootstrap);

  std::vector<RankInfo> infos(spec.nRanks);
  RankInfo& mine = infos[spec.rank];
  std::memset(&mine, 0, sizeof(mine));
  mine.hostHash = getHostHash();
  MSCCLPP_CUDATHROW(cudaDeviceGetPCIBusId(mine.busId, sizeof(mine.busId), spec.cudaDev));
  comm->bootstrap->allGather(infos.data(), sizeof(RankInfo));

  makeRealComm(comm, infos);
  try {
    comm->collectives = std::make_unique<collectives::Collectives>(comm->communicator);
  } catch (const Error& e) {
    // Every rank sees the same reason (ranks on several hosts): the real NCCL takes all operations.
    comm->collectivesProblem = e.what();
    LOG_INFO(NCCL, "rank ", spec.rank, ": our collectives cannot run here: ", e.what());
  }

  if (comm->collectives == nullptr && comm->real == nullptr) {
    MSCCLPP_THROW(InvalidUsage, "no way to run collectives for this communicator: ", comm->collectivesProblem, "; and ",
                  comm->realProblem);
  }
  LOG_INFO(NCCL, "communicator ", comm->config.commName.empty() ? "" : comm->config.commName + " ", "rank ", spec.rank,
           " of ", spec.nRanks, " on GPU ", spec.cudaDev, " (", mine.busId, "), ",
           comm->real != nullptr ? "with" : "without", " a real NCCL alongside");
}

bool runsOnOurs(ncclComm* comm, collectives::Collective kind) {
  const bool forced = forcedToReal(kind);
  if (comm->collectives != nullptr && !(forced && comm->real != nullptr)) return true;
  if (comm->real != nullptr) return false;
  MSCCLPP_THROW(InvalidUsage, collectives::collectiveName(kind), " cannot run: ", comm->collectivesProblem,
                "; and it cannot be forwarded: ", comm->realProblem);
}

bool validComm(const ncclComm* comm) { return comm != nullptr && comm->isValid(); }

ncclResult_t asyncState(ncclComm* comm) {
  ncclResult_t state = comm->asyncError.load();
  if (state == ncclSuccess && comm->real != nullptr) {
    ncclResult_t realState = ncclSuccess;
    if (comm->realLib->CommGetAsyncError(comm->real, &realState) == ncclSuccess) state = realState;
  }
  return state;
}

ncclResult_t readyComm(ncclComm* comm, const char* call) {
  if (!validComm(comm)) return fail(nullptr, call, ncclInvalidArgument, "comm is NULL or not a communicator");
  const ncclResult_t state = asyncState(comm);
  if (state == ncclInProgress) {
    return fail(comm, call, ncclInvalidArgument,
                "the communicator is still busy with a nonblocking init, split or finalize: poll "
                "ncclCommGetAsyncError until it is no longer ncclInProgress");
  }
  if (state != ncclSuccess) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(comm->mutex);
      why = comm->asyncFailure.empty() ? "the NCCL communicator beside it failed" : comm->asyncFailure;
    }
    return fail(comm, call, state, concat("the communicator failed earlier (", resultName(state), "): ", why));
  }
  if (comm->aborted) return fail(comm, call, ncclInvalidUsage, "the communicator was revoked");
  return ncclSuccess;
}

ncclResult_t startAsync(ncclComm* comm, const char* call, std::function<ncclResult_t()> work) {
  comm->join();
  comm->asyncError = ncclInProgress;
  comm->worker = std::thread([comm, call, work = std::move(work)]() {
    const ncclResult_t result = apiCall(comm, call, work);
    if (result != ncclSuccess) {
      std::lock_guard<std::mutex> lock(comm->mutex);
      comm->asyncFailure = comm->lastError;
    }
    comm->asyncError = result;
  });
  return ncclInProgress;
}

void reportRealFailure(ncclComm* comm, const char* call, ncclResult_t result) {
  const RealNccl& lib = *comm->realLib;
  fail(comm, call, result,
       concat("the NCCL at ", lib.path, " returned ", lib.GetErrorString(result), ": ", lib.GetLastError(comm->real)));
}

// A window (ncclCommWindowRegister, collective in NCCL too) is registered with our collectives, which
// map it on every rank so that all-reduce, reduce-scatter and all-gather on it run zero-copy. A local
// registration (ncclCommRegister) is only recorded: NCCL makes it without talking to the other ranks,
// and callers (PyTorch's allocator hook among them) register on one rank at a time, so it cannot start
// an exchange every rank must join.
ncclWindow_vidmem* registerBuffer(ncclComm* comm, ncclWindow_vidmem::Kind kind, void* buff, size_t size,
                                  void* realHandle) {
  if (kind == ncclWindow_vidmem::Kind::Window && comm->collectives != nullptr) {
    comm->collectives->registerBuffer(buff, size);
  }
  auto registration = std::make_unique<ncclWindow_vidmem>(ncclWindow_vidmem{kind, buff, size, realHandle});
  ncclWindow_vidmem* handle = registration.get();
  std::lock_guard<std::mutex> lock(comm->mutex);
  comm->registrations.emplace(handle, std::move(registration));
  return handle;
}

std::unique_ptr<ncclWindow_vidmem> deregisterBuffer(ncclComm* comm, const void* handle, ncclWindow_vidmem::Kind kind) {
  void* buff = nullptr;
  {
    std::lock_guard<std::mutex> lock(comm->mutex);
    auto it = comm->registrations.find(handle);
    MSCCLPP_CHECK_USAGE(it != comm->registrations.end(), handle,
                        " is not a registration of this communicator (deregistered already, made on another "
                        "communicator, or not a handle)");
    MSCCLPP_CHECK_USAGE(it->second->kind == kind, handle,
                        kind == ncclWindow_vidmem::Kind::Window
                            ? " was made by ncclCommRegister: deregister it with ncclCommDeregister"
                            : " is a window of ncclCommWindowRegister: deregister it with ncclCommWindowDeregister");
    buff = it->second->buff;
  }
  // The collective step first: when it fails the registration stays, usable and deregistrable.
  if (kind == ncclWindow_vidmem::Kind::Window && comm->collectives != nullptr) {
    comm->collectives->deregisterBuffer(buff);
  }
  std::lock_guard<std::mutex> lock(comm->mutex);
  auto it = comm->registrations.find(handle);
  MSCCLPP_CHECK_USAGE(it != comm->registrations.end(), handle, " was deregistered by another thread meanwhile");
  std::unique_ptr<ncclWindow_vidmem> registration = std::move(it->second);
  comm->registrations.erase(it);
  return registration;
}

}  // namespace mscclpp::nccl

void ncclComm::join() {
  if (worker.joinable()) worker.join();
}

ncclComm::~ncclComm() {
  join();
  if (aborted) {
    // A kernel of ours may still wait for a peer that will never come, and freeing the memory it uses
    // would wait for that kernel. The collectives object (which holds the communicator and
    // bootstrap) is left behind instead: an aborted communicator must return, not hang.
    static_cast<void>(collectives.release());
  }
  if (real != nullptr) {
    ncclResult_t res = aborted ? realLib->CommAbort(real) : realLib->CommDestroy(real);
    if (res != ncclSuccess)
      LOG_WARN(NCCL, "destroying the NCCL communicator alongside failed: ", realLib->GetErrorString(res));
  }
  magic = kDestroyed;
}
