// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The exported NCCL functions that make, query and end communicators, and the operations: each checks
// its arguments, then runs its body through apiCall.

#include <cstring>
#include <memory>
#include <mscclpp/gpu_utils.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "common/checks.hpp"
#include "ext/common/messages.hpp"
#include "ext/nccl/api_functions.hpp"
#include "ext/nccl/comm.hpp"
#include "ext/nccl/group.hpp"
#include "ext/nccl/status.hpp"

using mscclpp::nccl::apiCall;
using mscclpp::nccl::Call;
using mscclpp::nccl::fail;
using mscclpp::nccl::readyComm;
using mscclpp::nccl::Task;
using mscclpp::nccl::validComm;

namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(mscclpp::UniqueId), "ncclUniqueId carries a mscclpp::UniqueId");

/// Every collective and point-to-point call: checks it from its row (calls.hpp), then records or runs it.
ncclResult_t enqueue(const Task& task) {
  const char* call = mscclpp::nccl::callInfo(task.call).name;
  if (ncclResult_t res = readyComm(task.comm, call); res != ncclSuccess) return res;
  std::string problem;
  if (ncclResult_t res = mscclpp::nccl::checkArguments(task, problem); res != ncclSuccess) {
    return fail(task.comm, call, res, problem);
  }
  if (task.count == 0) return ncclSuccess;
  return apiCall(task.comm, call, [&]() { return mscclpp::nccl::submit(task); });
}

mscclpp::UniqueId idOf(const ncclUniqueId& commId) {
  mscclpp::UniqueId id;
  std::memcpy(id.data(), commId.internal, id.size());
  return id;
}

ncclResult_t initRank(ncclComm_t* out, int nranks, const mscclpp::UniqueId& id, int rank, const ncclConfig_t* config,
                      const char* call) {
  NCCL_REQUIRE(call, out != nullptr, nullptr, ncclInvalidArgument, "comm (the result pointer) is NULL");
  NCCL_REQUIRE(call, nranks >= 1, nullptr, ncclInvalidArgument, "nranks ", nranks, " is not positive");
  NCCL_REQUIRE(call, rank >= 0 && rank < nranks, nullptr, ncclInvalidArgument, "rank ", rank, " is not in [0, ", nranks,
               ")");
  mscclpp::nccl::JoinSpec spec;
  std::string problem;
  NCCL_REQUIRE(call, mscclpp::nccl::readConfig(config, spec.config, problem), nullptr, ncclInvalidArgument, problem);
  spec.rank = rank;
  spec.nRanks = nranks;
  spec.id = id;
  cudaError_t err = cudaGetDevice(&spec.cudaDev);
  NCCL_REQUIRE(call, err == cudaSuccess, nullptr, ncclUnhandledCudaError,
               "cudaGetDevice failed: ", cudaGetErrorString(err));
  return apiCall(nullptr, call, [&]() {
    auto comm = std::make_unique<ncclComm>();
    ncclComm* raw = comm.get();
    if (!spec.config.blocking) {
      const ncclResult_t res = mscclpp::nccl::startAsync(raw, call, [raw, spec]() {
        mscclpp::nccl::joinComm(raw, spec);
        return ncclSuccess;
      });
      *out = comm.release();
      return res;
    }
    if (!mscclpp::nccl::inGroup()) {
      mscclpp::nccl::joinComm(raw, spec);
      *out = comm.release();
      return ncclSuccess;
    }
    // Inside a group the caller holds the handle before the join runs; a failed join leaves its
    // code on the communicator, where every later call finds it.
    mscclpp::nccl::submitInit([raw, spec, call]() {
      try {
        mscclpp::nccl::joinComm(raw, spec);
      } catch (...) {
        const std::exception_ptr error = std::current_exception();
        {
          std::lock_guard<std::mutex> lock(raw->mutex);
          raw->asyncFailure = mscclpp::ext::messageFrom(call, mscclpp::nccl::messageOf(error));
        }
        raw->asyncError = mscclpp::nccl::resultOf(error);
        throw;
      }
    });
    *out = comm.release();
    return ncclSuccess;
  });
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  NCCL_REQUIRE(__func__, version != nullptr, nullptr, ncclInvalidArgument, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  NCCL_REQUIRE(__func__, uniqueId != nullptr, nullptr, ncclInvalidArgument, "uniqueId is NULL");
  return apiCall(nullptr, __func__, [&]() {
    mscclpp::UniqueId id = mscclpp::TcpBootstrap::createUniqueId();
    std::memcpy(uniqueId->internal, id.data(), id.size());
    return ncclSuccess;
  });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return initRank(comm, nranks, idOf(commId), rank, config, __func__);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return initRank(comm, nranks, idOf(commId), rank, nullptr, __func__);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  NCCL_REQUIRE(__func__, nId >= 1 && commIds != nullptr, nullptr, ncclInvalidArgument, "nId ", nId,
               " ids at commIds=", static_cast<const void*>(commIds), " is not at least one id");
  // One bootstrap root serves every rank: the first id is the one all ranks agree on.
  return initRank(newcomm, nranks, idOf(commIds[0]), myrank, config, __func__);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  NCCL_REQUIRE(__func__, comm != nullptr, nullptr, ncclInvalidArgument, "comm (the result array) is NULL");
  NCCL_REQUIRE(__func__, ndev >= 1, nullptr, ncclInvalidArgument, "ndev ", ndev, " is not positive");
  int nDevices = 0;
  cudaError_t err = cudaGetDeviceCount(&nDevices);
  NCCL_REQUIRE(__func__, err == cudaSuccess, nullptr, ncclUnhandledCudaError,
               "cudaGetDeviceCount failed: ", cudaGetErrorString(err));
  for (int i = 0; i < ndev; ++i) {
    const int dev = devlist != nullptr ? devlist[i] : i;
    NCCL_REQUIRE(__func__, dev >= 0 && dev < nDevices, nullptr, ncclInvalidArgument, "device ", dev, " (entry ", i,
                 ") is not one of the ", nDevices, " CUDA devices");
  }
  int savedDev = 0;
  cudaGetDevice(&savedDev);
  return apiCall(nullptr, __func__, [&]() {
    mscclpp::UniqueId id = mscclpp::TcpBootstrap::createUniqueId();
    std::vector<std::unique_ptr<ncclComm>> comms;
    std::vector<mscclpp::nccl::JoinSpec> specs(ndev);
    mscclpp::nccl::groupStart();
    for (int i = 0; i < ndev; ++i) {
      comms.push_back(std::make_unique<ncclComm>());
      specs[i].rank = i;
      specs[i].nRanks = ndev;
      specs[i].id = id;
      specs[i].cudaDev = devlist != nullptr ? devlist[i] : i;
      ncclComm* raw = comms.back().get();
      mscclpp::nccl::submitInit([raw, spec = specs[i]]() { mscclpp::nccl::joinComm(raw, spec); });
    }
    ncclResult_t res = mscclpp::nccl::groupEnd();
    cudaSetDevice(savedDev);
    if (res != ncclSuccess) return res;
    for (int i = 0; i < ndev; ++i) comm[i] = comms[i].release();
    return ncclSuccess;
  });
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  auto finalize = [comm]() {
    mscclpp::CudaDeviceGuard deviceGuard(comm->cudaDev);
    // Outstanding work of this communicator is on streams we do not track: wait for the device.
    MSCCLPP_CUDATHROW(cudaDeviceSynchronize());
    if (comm->real != nullptr) {
      ncclResult_t res =
          mscclpp::nccl::callReal(comm, "ncclCommFinalize", &mscclpp::nccl::RealNccl::CommFinalize, comm->real);
      if (res != ncclSuccess) return res;
    }
    comm->bootstrap->barrier();
    return ncclSuccess;
  };
  if (!comm->config.blocking) return mscclpp::nccl::startAsync(comm, __func__, finalize);
  return apiCall(comm, __func__, finalize);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  NCCL_REQUIRE(__func__, comm->isValid(), nullptr, ncclInvalidArgument, "comm is not a communicator");
  return apiCall(nullptr, __func__, [&]() {
    delete comm;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  NCCL_REQUIRE(__func__, comm->isValid(), nullptr, ncclInvalidArgument, "comm is not a communicator");
  return apiCall(nullptr, __func__, [&]() {
    comm->aborted = true;
    delete comm;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(__func__, revokeFlags == NCCL_REVOKE_DEFAULT, comm, ncclInvalidArgument, "revokeFlags ", revokeFlags,
               " is not NCCL_REVOKE_DEFAULT");
  comm->aborted = true;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) { return mscclpp::nccl::resultName(result); }

const char* ncclGetLastError(ncclComm_t comm) {
  thread_local std::string text;
  text = mscclpp::nccl::lastError(validComm(comm) ? comm : nullptr);
  return text.c_str();
}

void ncclResetDebugInit() {}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  // The real NCCL asking about its own communicator (ncclCommEnsureReady), bound to this function because
  // it was in the global scope before us: real_nccl.hpp says when.
  if (comm != nullptr && !comm->isValid()) {
    if (const mscclpp::nccl::RealNccl* real = mscclpp::nccl::openedRealNccl())
      return real->CommGetAsyncError(comm, asyncError);
  }
  NCCL_REQUIRE(__func__, validComm(comm), nullptr, ncclInvalidArgument, "comm is NULL or not a communicator");
  NCCL_REQUIRE(__func__, asyncError != nullptr, comm, ncclInvalidArgument, "asyncError is NULL");
  *asyncError = mscclpp::nccl::asyncState(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(__func__, count != nullptr, comm, ncclInvalidArgument, "count is NULL");
  *count = comm->nRanks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(__func__, device != nullptr, comm, ncclInvalidArgument, "device is NULL");
  *device = comm->cudaDev;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(__func__, rank != nullptr, comm, ncclInvalidArgument, "rank is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::Reduce, comm, sendbuff, recvbuff, count, datatype, op, root, stream});
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::Broadcast, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream});
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::AllReduce, comm, sendbuff, recvbuff, count, datatype, op, 0, stream});
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::ReduceScatter, comm, sendbuff, recvbuff, recvcount, datatype, op, 0, stream});
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::AllGather, comm, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, stream});
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  return enqueue({Call::AllToAll, comm, sendbuff, recvbuff, count, datatype, ncclSum, 0, stream});
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::Gather, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream});
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return enqueue({Call::Scatter, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream});
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return enqueue({Call::Send, comm, sendbuff, nullptr, count, datatype, ncclSum, peer, stream});
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return enqueue({Call::Recv, comm, nullptr, recvbuff, count, datatype, ncclSum, peer, stream});
}

ncclResult_t ncclGroupStart() {
  mscclpp::nccl::groupStart();
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  return apiCall(nullptr, __func__, []() { return mscclpp::nccl::groupEnd(); });
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  NCCL_REQUIRE(__func__, simInfo != nullptr, nullptr, ncclInvalidArgument, "simInfo is NULL");
  NCCL_REQUIRE(__func__, simInfo->magic == 0x74685283, nullptr, ncclInvalidArgument,
               "ncclSimInfo_t not made with NCCL_SIM_INFO_INITIALIZER");
  return apiCall(nullptr, __func__, [&]() {
    ncclResult_t res = mscclpp::nccl::groupSimulateEnd();
    // No cost model here: the estimate stays "undefined".
    simInfo->estimatedTime = NCCL_UNDEF_FLOAT;
    return res;
  });
}

}  // extern "C"
