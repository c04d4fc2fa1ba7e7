// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The exported functions that make communicators from others, register memory and make operators.
// Each names itself once, `call`, for its checks and the lambda its work runs in (where __func__
// would name the lambda).

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/checks.hpp"
#include "ext/nccl/api_functions.hpp"
#include "ext/nccl/comm.hpp"
#include "ext/nccl/status.hpp"

using mscclpp::nccl::apiCall;
using mscclpp::nccl::callReal;
using mscclpp::nccl::fail;
using mscclpp::nccl::readyComm;
using mscclpp::nccl::RealNccl;
using mscclpp::nccl::validComm;
using Kind = ncclWindow_vidmem::Kind;

namespace {

/// The child's configuration: the caller's, or the parent's when it passes NULL.
ncclResult_t childConfig(ncclComm_t parent, const ncclConfig_t* config, mscclpp::nccl::CommConfig& out,
                         const char* call) {
  if (config == nullptr) {
    out = parent->config;
    return ncclSuccess;
  }
  std::string problem;
  if (!mscclpp::nccl::readConfig(config, out, problem)) return fail(parent, call, ncclInvalidArgument, problem);
  return ncclSuccess;
}

/// Joins the child on the calling thread (blocking config) or a worker of its own.
ncclResult_t startChild(ncclComm_t* newcomm, const mscclpp::nccl::JoinSpec& spec, const char* call) {
  auto child = std::make_unique<ncclComm>();
  ncclComm* raw = child.get();
  if (spec.config.blocking) {
    mscclpp::nccl::joinComm(raw, spec);
    *newcomm = child.release();
    return ncclSuccess;
  }
  const ncclResult_t res = mscclpp::nccl::startAsync(raw, call, [raw, spec]() {
    mscclpp::nccl::joinComm(raw, spec);
    return ncclSuccess;
  });
  *newcomm = child.release();
  return res;
}

}  // namespace

extern "C" {

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  const char* const call = __func__;
  if (ncclResult_t res = readyComm(comm, call); res != ncclSuccess) return res;
  NCCL_REQUIRE(call, newcomm != nullptr, comm, ncclInvalidArgument, "newcomm is NULL");
  NCCL_REQUIRE(call, color >= 0 || color == NCCL_SPLIT_NOCOLOR, comm, ncclInvalidArgument, "color ", color,
               " is negative and not NCCL_SPLIT_NOCOLOR");
  mscclpp::nccl::JoinSpec spec;
  if (ncclResult_t res = childConfig(comm, config, spec.config, call); res != ncclSuccess) return res;
  *newcomm = nullptr;
  return apiCall(comm, call, [&]() {
    struct Member {
      int color, key, rank;
    };
    std::vector<Member> members(comm->nRanks);
    members[comm->rank] = {color, key, comm->rank};
    comm->bootstrap->allGather(members.data(), sizeof(Member));
    std::vector<Member> mine;
    for (const Member& m : members) {
      if (color != NCCL_SPLIT_NOCOLOR && m.color == color) mine.push_back(m);
    }
    std::stable_sort(mine.begin(), mine.end(),
                     [](const Member& a, const Member& b) { return a.key != b.key ? a.key < b.key : a.rank < b.rank; });
    // The first member of each color makes the child's id; every rank contributes a slot.
    const bool leader = !mine.empty() && mine.front().rank == comm->rank;
    std::vector<mscclpp::UniqueId> ids(comm->nRanks);
    if (leader) ids[comm->rank] = mscclpp::TcpBootstrap::createUniqueId();
    comm->bootstrap->allGather(ids.data(), sizeof(mscclpp::UniqueId));
    if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
    spec.nRanks = static_cast<int>(mine.size());
    for (int i = 0; i < spec.nRanks; ++i) {
      if (mine[i].rank == comm->rank) spec.rank = i;
    }
    spec.id = ids[mine.front().rank];
    spec.cudaDev = comm->cudaDev;
    return startChild(newcomm, spec, call);
  });
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  const char* const call = __func__;
  if (!validComm(comm)) return fail(nullptr, call, ncclInvalidArgument, "comm is NULL or not a communicator");
  NCCL_REQUIRE(call, newcomm != nullptr, comm, ncclInvalidArgument, "newcomm is NULL");
  NCCL_REQUIRE(call, excludeRanksCount >= 0 && (excludeRanksCount == 0 || excludeRanksList != nullptr), comm,
               ncclInvalidArgument, "excludeRanksCount ", excludeRanksCount, " with excludeRanksList ",
               static_cast<const void*>(excludeRanksList));
  NCCL_REQUIRE(call, shrinkFlags == NCCL_SHRINK_DEFAULT || shrinkFlags == NCCL_SHRINK_ABORT, comm, ncclInvalidArgument,
               "shrinkFlags ", shrinkFlags, " is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT");
  std::vector<bool> excluded(comm->nRanks, false);
  for (int i = 0; i < excludeRanksCount; ++i) {
    const int r = excludeRanksList[i];
    NCCL_REQUIRE(call, r >= 0 && r < comm->nRanks, comm, ncclInvalidArgument, "excluded rank ", r,
                 " is not a rank of this communicator of ", comm->nRanks);
    excluded[r] = true;
  }
  NCCL_REQUIRE(call, !excluded[comm->rank], comm, ncclInvalidArgument, "rank ", comm->rank,
               " excludes itself; excluded ranks do not call ncclCommShrink");
  mscclpp::nccl::JoinSpec spec;
  if (ncclResult_t res = childConfig(comm, config, spec.config, call); res != ncclSuccess) return res;
  *newcomm = nullptr;
  return apiCall(comm, call, [&]() {
    std::vector<int> survivors;
    for (int r = 0; r < comm->nRanks; ++r) {
      if (!excluded[r]) survivors.push_back(r);
    }
    // Only the survivors take part, so the id travels point to point from the first of them.
    const int tag = comm->controlTag++;
    if (survivors.front() == comm->rank) {
      spec.id = mscclpp::TcpBootstrap::createUniqueId();
      for (size_t i = 1; i < survivors.size(); ++i) {
        comm->bootstrap->send(spec.id.data(), static_cast<int>(spec.id.size()), survivors[i], tag);
      }
    } else {
      comm->bootstrap->recv(spec.id.data(), static_cast<int>(spec.id.size()), survivors.front(), tag);
    }
    spec.nRanks = static_cast<int>(survivors.size());
    spec.rank = static_cast<int>(std::find(survivors.begin(), survivors.end(), comm->rank) - survivors.begin());
    spec.cudaDev = comm->cudaDev;
    return startChild(newcomm, spec, call);
  });
}

// Registration records the buffer with this communicator (comm.cc: registerBuffer says what our
// collectives make of it) and, where a real NCCL communicator is beside ours, registers it there too,
// for the operations forwarded to it.

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const char* const call = __func__;
  if (ncclResult_t res = readyComm(comm, call); res != ncclSuccess) return res;
  NCCL_REQUIRE(call, handle != nullptr, comm, ncclInvalidArgument, "handle is NULL");
  NCCL_REQUIRE(call, buff != nullptr && size > 0, comm, ncclInvalidArgument, "buffer ", buff, " of ", size,
               " bytes is empty");
  return apiCall(comm, call, [&]() {
    void* realHandle = nullptr;
    if (comm->real != nullptr) {
      ncclResult_t res = callReal(comm, call, &RealNccl::CommRegister, comm->real, buff, size, &realHandle);
      if (res != ncclSuccess) return res;
    }
    *handle = mscclpp::nccl::registerBuffer(comm, Kind::Local, buff, size, realHandle);
    return ncclSuccess;
  });
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  const char* const call = __func__;
  NCCL_REQUIRE(call, validComm(comm), nullptr, ncclInvalidArgument, "comm is NULL or not a communicator");
  // As in NCCL: ncclCommRegister may hand out NULL (registration disabled), and freeing it is a no-op.
  if (handle == nullptr) return ncclSuccess;
  return apiCall(comm, call, [&]() {
    std::unique_ptr<ncclWindow_vidmem> registration = mscclpp::nccl::deregisterBuffer(comm, handle, Kind::Local);
    if (registration->real == nullptr) return ncclSuccess;
    return callReal(comm, call, &RealNccl::CommDeregister, comm->real, registration->real);
  });
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  const char* const call = __func__;
  if (ncclResult_t res = readyComm(comm, call); res != ncclSuccess) return res;
  NCCL_REQUIRE(call, win != nullptr, comm, ncclInvalidArgument, "win is NULL");
  NCCL_REQUIRE(call, buff != nullptr && size > 0, comm, ncclInvalidArgument, "buffer ", buff, " of ", size,
               " bytes is empty");
  NCCL_REQUIRE(call, (winFlags & ~NCCL_WIN_COLL_SYMMETRIC) == 0, comm, ncclInvalidArgument, "winFlags 0x", std::hex,
               winFlags, " has bits other than NCCL_WIN_COLL_SYMMETRIC");
  return apiCall(comm, call, [&]() {
    ncclWindow_t realWindow = nullptr;
    if (comm->real != nullptr) {
      ncclResult_t res =
          callReal(comm, call, &RealNccl::CommWindowRegister, comm->real, buff, size, &realWindow, winFlags);
      if (res != ncclSuccess) return res;
    }
    try {
      *win = mscclpp::nccl::registerBuffer(comm, Kind::Window, buff, size, realWindow);
    } catch (...) {
      // Ours refused the window: the real NCCL's must not outlive the failed call.
      if (realWindow != nullptr) (void)comm->realLib->CommWindowDeregister(comm->real, realWindow);
      throw;
    }
    return ncclSuccess;
  });
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  const char* const call = __func__;
  NCCL_REQUIRE(call, validComm(comm), nullptr, ncclInvalidArgument, "comm is NULL or not a communicator");
  if (win == nullptr) return ncclSuccess;
  return apiCall(comm, call, [&]() {
    std::unique_ptr<ncclWindow_vidmem> window = mscclpp::nccl::deregisterBuffer(comm, win, Kind::Window);
    if (window->real == nullptr) return ncclSuccess;
    return callReal(comm, call, &RealNccl::CommWindowDeregister, comm->real, static_cast<ncclWindow_t>(window->real));
  });
}

// A device communicator is used by NCCL's own device code (nccl_device.h), which reads the real NCCL's
// structures: it can only come from the real NCCL, over the communicator this one keeps beside its own.
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements* reqs, ncclDevComm* outDevComm) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(__func__, reqs != nullptr, comm, ncclInvalidArgument, "reqs is NULL");
  NCCL_REQUIRE(__func__, outDevComm != nullptr, comm, ncclInvalidArgument, "outDevComm is NULL");
  NCCL_REQUIRE(__func__, comm->real != nullptr && comm->realLib->DevCommCreate != nullptr, comm, ncclInvalidUsage,
               "device communicators come from the real NCCL's device API, and this communicator has no real NCCL "
               "communicator with it (set MSCCLPP_NCCL_LIB_PATH to an NCCL 2.28 or newer)");
  return callReal(comm, __func__, &RealNccl::DevCommCreate, comm->real, reqs, outDevComm);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm* devComm) {
  NCCL_REQUIRE(__func__, validComm(comm), nullptr, ncclInvalidArgument, "comm is NULL or not a communicator");
  NCCL_REQUIRE(__func__, devComm != nullptr, comm, ncclInvalidArgument, "devComm is NULL");
  NCCL_REQUIRE(__func__, comm->real != nullptr && comm->realLib->DevCommDestroy != nullptr, comm, ncclInvalidUsage,
               "this communicator made no device communicator (it has no real NCCL communicator)");
  return callReal(comm, __func__, &RealNccl::DevCommDestroy, comm->real, devComm);
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  const char* const call = __func__;
  if (ncclResult_t res = readyComm(comm, call); res != ncclSuccess) return res;
  NCCL_REQUIRE(call, op != nullptr, comm, ncclInvalidArgument, "op is NULL");
  NCCL_REQUIRE(call, scalar != nullptr, comm, ncclInvalidArgument, "scalar is NULL");
  NCCL_REQUIRE(call, datatype >= ncclInt8 && datatype < ncclNumTypes, comm, ncclInvalidArgument, "data type ",
               static_cast<int>(datatype), " is not an ncclDataType_t");
  NCCL_REQUIRE(call, residence == ncclScalarDevice || residence == ncclScalarHostImmediate, comm, ncclInvalidArgument,
               "residence ", static_cast<int>(residence), " is not an ncclScalarResidence_t");
  return apiCall(comm, call, [&]() {
    namespace coll = mscclpp::collectives;
    const auto type = static_cast<coll::DataType>(datatype);
    mscclpp::nccl::PreMulSumOp made{datatype,
                                    residence == ncclScalarHostImmediate ? coll::ReduceOp::preMulSumHost(scalar, type)
                                                                         : coll::ReduceOp::preMulSumDevice(scalar),
                                    ncclSum};
    if (comm->real != nullptr) {
      ncclResult_t res =
          callReal(comm, call, &RealNccl::RedOpCreatePreMulSum, &made.realOp, scalar, datatype, residence, comm->real);
      if (res != ncclSuccess) return res;
    }
    std::lock_guard<std::mutex> lock(comm->mutex);
    MSCCLPP_CHECK_USAGE(comm->nextPreMulSumOp < ncclMaxRedOp, "no reduction operator values are left");
    *op = static_cast<ncclRedOp_t>(comm->nextPreMulSumOp++);
    comm->preMulSumOps.emplace(*op, made);
    return ncclSuccess;
  });
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  const char* const call = __func__;
  NCCL_REQUIRE(call, validComm(comm), nullptr, ncclInvalidArgument, "comm is NULL or not a communicator");
  NCCL_REQUIRE(call, op >= ncclNumOps, comm, ncclInvalidArgument, "operator ", static_cast<int>(op),
               " is built in, not made by ncclRedOpCreatePreMulSum");
  return apiCall(comm, call, [&]() {
    mscclpp::nccl::PreMulSumOp removed;
    {
      std::lock_guard<std::mutex> lock(comm->mutex);
      auto it = comm->preMulSumOps.find(op);
      MSCCLPP_CHECK_USAGE(it != comm->preMulSumOps.end(), "operator ", static_cast<int>(op),
                          " was not made on this communicator or is already destroyed");
      removed = it->second;
      comm->preMulSumOps.erase(it);
    }
    if (comm->real == nullptr) return ncclSuccess;
    return callReal(comm, call, &RealNccl::RedOpDestroy, removed.realOp, comm->real);
  });
}

}  // extern "C"
