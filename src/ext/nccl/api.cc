// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The exported NCCL functions: each checks its arguments, then runs its body through apiCall.

#include <cstring>
#include <mscclpp/gpu_utils.hpp>
#include <vector>

#include "common/checks.hpp"
#include "ext/nccl/api_functions.hpp"
#include "ext/nccl/comm.hpp"
#include "ext/nccl/group.hpp"
#include "ext/nccl/status.hpp"

using mscclpp::nccl::apiCall;
using mscclpp::nccl::Call;
using mscclpp::nccl::fail;

namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(mscclpp::UniqueId), "ncclUniqueId carries a mscclpp::UniqueId");

bool validComm(ncclComm_t comm) { return comm != nullptr && comm->isValid(); }

bool validType(ncclDataType_t type) { return type >= ncclInt8 && type < ncclNumTypes; }

/// A built-in operator, or a PreMulSum operator of `comm` made for `type`.
bool validOp(ncclComm_t comm, ncclRedOp_t op, ncclDataType_t type, std::string& problem) {
  if (op >= ncclSum && op < ncclNumOps) return true;
  std::lock_guard<std::mutex> lock(comm->mutex);
  auto it = comm->preMulSumOps.find(op);
  if (it == comm->preMulSumOps.end()) {
    problem = mscclpp::concat("reduction operator ", static_cast<int>(op), " is neither built in nor made by ",
                              "ncclRedOpCreatePreMulSum on this communicator");
    return false;
  }
  if (it->second.type != type) {
    problem = mscclpp::concat("reduction operator ", static_cast<int>(op), " was made for data type ",
                              static_cast<int>(it->second.type), ", not ", static_cast<int>(type));
    return false;
  }
  return true;
}

/// A communicator that has finished joining (a nonblocking init may still be running).
ncclResult_t readyComm(ncclComm_t comm, const char* call) {
  if (!validComm(comm)) return fail(nullptr, call, ncclInvalidArgument, "comm is NULL or not a communicator");
  ncclResult_t state = comm->asyncError.load();
  if (state == ncclInProgress) {
    return fail(comm, call, ncclInvalidUsage, "the communicator is still initializing (nonblocking init)");
  }
  if (state != ncclSuccess) {
    return fail(comm, call, state, "the communicator failed earlier: " + mscclpp::nccl::lastError(comm));
  }
  if (comm->aborted) return fail(comm, call, ncclInvalidUsage, "the communicator was aborted");
  return ncclSuccess;
}

/// The common checks of a collective, then records or runs it.
ncclResult_t collective(const char* call, mscclpp::nccl::Task task, bool hasOp, bool hasRoot, bool needSend,
                        bool needRecv) {
  ncclComm_t comm = task.comm;
  if (ncclResult_t res = readyComm(comm, call); res != ncclSuccess) return res;
  NCCL_REQUIRE(validType(task.type), comm, ncclInvalidArgument, "data type ", static_cast<int>(task.type),
               " is not an ncclDataType_t");
  std::string problem;
  NCCL_REQUIRE(!hasOp || validOp(comm, task.op, task.type, problem), comm, ncclInvalidArgument, problem);
  NCCL_REQUIRE(!hasRoot || (task.root >= 0 && task.root < comm->nRanks), comm, ncclInvalidArgument,
               task.call == Call::Send || task.call == Call::Recv ? "peer " : "root ", task.root,
               " is not a rank of this communicator of ", comm->nRanks);
  if (task.count == 0) return ncclSuccess;
  NCCL_REQUIRE(!needSend || task.send != nullptr, comm, ncclInvalidArgument, "sendbuff is NULL");
  NCCL_REQUIRE(!needRecv || task.recv != nullptr, comm, ncclInvalidArgument, "recvbuff is NULL");
  return apiCall(comm, call, [&]() {
    mscclpp::nccl::submit(task);
    return ncclSuccess;
  });
}

mscclpp::nccl::Task task(Call call, ncclComm_t comm, const void* send, void* recv, size_t count, ncclDataType_t type,
                         ncclRedOp_t op, int root, cudaStream_t stream) {
  return mscclpp::nccl::Task{call, comm, send, recv, count, type, op, root, stream};
}

ncclResult_t initRank(ncclComm_t* out, int nranks, const mscclpp::UniqueId& id, int rank, const ncclConfig_t* config,
                      const char* call) {
  NCCL_REQUIRE(out != nullptr, nullptr, ncclInvalidArgument, "comm (the result pointer) is NULL");
  NCCL_REQUIRE(nranks >= 1, nullptr, ncclInvalidArgument, "nranks ", nranks, " is not positive");
  NCCL_REQUIRE(rank >= 0 && rank < nranks, nullptr, ncclInvalidArgument, "rank ", rank, " is not in [0, ", nranks, ")");
  mscclpp::nccl::JoinSpec spec;
  std::string problem;
  NCCL_REQUIRE(mscclpp::nccl::readConfig(config, spec.config, problem), nullptr, ncclInvalidArgument, problem);
  spec.rank = rank;
  spec.nRanks = nranks;
  spec.id = id;
  cudaError_t err = cudaGetDevice(&spec.cudaDev);
  NCCL_REQUIRE(err == cudaSuccess, nullptr, ncclUnhandledCudaError, "cudaGetDevice failed: ", cudaGetErrorString(err));
  return apiCall(nullptr, call, [&]() {
    auto comm = std::make_unique<ncclComm>();
    ncclComm* raw = comm.get();
    const bool blocking = spec.config.blocking;
    if (blocking) {
      if (!mscclpp::nccl::inGroup()) {
        mscclpp::nccl::joinComm(raw, spec);
        *out = comm.release();
        return ncclSuccess;
      }
      // Inside a group the caller holds the handle before the join runs; a failed join leaves its
      // code on the communicator, where every later call finds it.
      mscclpp::nccl::submitInit([raw, spec]() {
        try {
          mscclpp::nccl::joinComm(raw, spec);
        } catch (...) {
          raw->asyncError = mscclpp::nccl::resultOf(std::current_exception());
          throw;
        }
      });
      *out = comm.release();
      return ncclSuccess;
    }
    raw->asyncError = ncclInProgress;
    raw->worker = std::thread([raw, spec]() {
      ncclResult_t res = apiCall(raw, "ncclCommInitRankConfig", [&]() {
        mscclpp::nccl::joinComm(raw, spec);
        return ncclSuccess;
      });
      raw->asyncError = res;
    });
    *out = comm.release();
    return ncclInProgress;
  });
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  NCCL_REQUIRE(version != nullptr, nullptr, ncclInvalidArgument, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  NCCL_REQUIRE(uniqueId != nullptr, nullptr, ncclInvalidArgument, "uniqueId is NULL");
  return apiCall(nullptr, __func__, [&]() {
    mscclpp::UniqueId id = mscclpp::TcpBootstrap::createUniqueId();
    std::memcpy(uniqueId->internal, id.data(), id.size());
    return ncclSuccess;
  });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  mscclpp::UniqueId id;
  std::memcpy(id.data(), commId.internal, id.size());
  return initRank(comm, nranks, id, rank, config, __func__);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  NCCL_REQUIRE(nId >= 1 && commIds != nullptr, nullptr, ncclInvalidArgument, "nId ", nId,
               " ids at commIds=", static_cast<const void*>(commIds), " is not at least one id");
  // One bootstrap root serves every rank: the first id is the one all ranks agree on.
  return ncclCommInitRankConfig(newcomm, nranks, commIds[0], myrank, config);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  NCCL_REQUIRE(comm != nullptr, nullptr, ncclInvalidArgument, "comm (the result array) is NULL");
  NCCL_REQUIRE(ndev >= 1, nullptr, ncclInvalidArgument, "ndev ", ndev, " is not positive");
  int nDevices = 0;
  cudaError_t err = cudaGetDeviceCount(&nDevices);
  NCCL_REQUIRE(err == cudaSuccess, nullptr, ncclUnhandledCudaError,
               "cudaGetDeviceCount failed: ", cudaGetErrorString(err));
  for (int i = 0; i < ndev; ++i) {
    const int dev = devlist != nullptr ? devlist[i] : i;
    NCCL_REQUIRE(dev >= 0 && dev < nDevices, nullptr, ncclInvalidArgument, "device ", dev, " (entry ", i,
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
    return apiCall(comm, "ncclCommFinalize", [&]() {
      mscclpp::CudaDeviceGuard deviceGuard(comm->cudaDev);
      // Outstanding work of this communicator is on streams we do not track: wait for the device.
      MSCCLPP_CUDATHROW(cudaDeviceSynchronize());
      if (comm->real != nullptr) {
        ncclResult_t res = comm->realLib->CommFinalize(comm->real);
        if (res != ncclSuccess)
          MSCCLPP_THROW(RemoteError, "ncclCommFinalize of the real NCCL: ", comm->realLib->GetErrorString(res));
      }
      comm->bootstrap->barrier();
      return ncclSuccess;
    });
  };
  if (comm->config.blocking) return finalize();
  comm->join();
  comm->asyncError = ncclInProgress;
  comm->worker = std::thread([comm, finalize]() { comm->asyncError = finalize(); });
  return ncclInProgress;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  NCCL_REQUIRE(comm->isValid(), nullptr, ncclInvalidArgument, "comm is not a communicator");
  return apiCall(nullptr, __func__, [&]() {
    delete comm;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  NCCL_REQUIRE(comm->isValid(), nullptr, ncclInvalidArgument, "comm is not a communicator");
  return apiCall(nullptr, __func__, [&]() {
    comm->aborted = true;
    delete comm;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(revokeFlags == NCCL_REVOKE_DEFAULT, comm, ncclInvalidArgument, "revokeFlags ", revokeFlags,
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
  NCCL_REQUIRE(validComm(comm), nullptr, ncclInvalidArgument, "comm is NULL or not a communicator");
  NCCL_REQUIRE(asyncError != nullptr, comm, ncclInvalidArgument, "asyncError is NULL");
  *asyncError = comm->asyncError.load();
  if (*asyncError == ncclSuccess && comm->real != nullptr) {
    ncclResult_t realError = ncclSuccess;
    if (comm->realLib->CommGetAsyncError(comm->real, &realError) == ncclSuccess) *asyncError = realError;
  }
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(count != nullptr, comm, ncclInvalidArgument, "count is NULL");
  *count = comm->nRanks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(device != nullptr, comm, ncclInvalidArgument, "device is NULL");
  *device = comm->cudaDev;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (ncclResult_t res = readyComm(comm, __func__); res != ncclSuccess) return res;
  NCCL_REQUIRE(rank != nullptr, comm, ncclInvalidArgument, "rank is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  NCCL_REQUIRE(ptr != nullptr, nullptr, ncclInvalidArgument, "ptr is NULL");
  if (size == 0) {
    *ptr = nullptr;
    return ncclSuccess;
  }
  return apiCall(nullptr, __func__, [&]() {
    *ptr = mscclpp::detail::gpuCallocPhysical(size);
    return ncclSuccess;
  });
}

ncclResult_t ncclMemFree(void* ptr) {
  return apiCall(nullptr, __func__, [&]() {
    mscclpp::detail::gpuFreePhysical(ptr);
    return ncclSuccess;
  });
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  const bool isRoot = validComm(comm) && comm->rank == root;
  return collective(__func__, task(Call::Reduce, comm, sendbuff, recvbuff, count, datatype, op, root, stream), true,
                    true, true, isRoot);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  const bool isRoot = validComm(comm) && comm->rank == root;
  return collective(__func__, task(Call::Broadcast, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream),
                    false, true, isRoot, true);
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective(__func__, task(Call::AllReduce, comm, sendbuff, recvbuff, count, datatype, op, 0, stream), true,
                    false, true, true);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective(__func__, task(Call::ReduceScatter, comm, sendbuff, recvbuff, recvcount, datatype, op, 0, stream),
                    true, false, true, true);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective(__func__, task(Call::AllGather, comm, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, stream),
                    false, false, true, true);
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  return collective(__func__, task(Call::AllToAll, comm, sendbuff, recvbuff, count, datatype, ncclSum, 0, stream),
                    false, false, true, true);
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  const bool isRoot = validComm(comm) && comm->rank == root;
  return collective(__func__, task(Call::Gather, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream),
                    false, true, true, isRoot);
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  const bool isRoot = validComm(comm) && comm->rank == root;
  return collective(__func__, task(Call::Scatter, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream),
                    false, true, isRoot, true);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return collective(__func__, task(Call::Send, comm, sendbuff, nullptr, count, datatype, ncclSum, peer, stream), false,
                    true, true, false);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return collective(__func__, task(Call::Recv, comm, nullptr, recvbuff, count, datatype, ncclSum, peer, stream), false,
                    true, false, true);
}

ncclResult_t ncclGroupStart() {
  mscclpp::nccl::groupStart();
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  return apiCall(nullptr, __func__, []() { return mscclpp::nccl::groupEnd(); });
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  NCCL_REQUIRE(simInfo != nullptr, nullptr, ncclInvalidArgument, "simInfo is NULL");
  NCCL_REQUIRE(simInfo->magic == 0x74685283, nullptr, ncclInvalidArgument,
               "ncclSimInfo_t not made with NCCL_SIM_INFO_INITIALIZER");
  return apiCall(nullptr, __func__, [&]() {
    ncclResult_t res = mscclpp::nccl::groupSimulateEnd();
    // No cost model here: the estimate stays "undefined".
    simInfo->estimatedTime = NCCL_UNDEF_FLOAT;
    return res;
  });
}

}  // extern "C"
