// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/nccl/calls.hpp"

#include <mutex>

#include "common/strings.hpp"
#include "ext/common/call_bytes.hpp"
#include "ext/nccl/comm.hpp"

namespace mscclpp::nccl {

namespace {

using collectives::Collective;

// In the order of enum Call: callInfo() indexes it, and the static_assert below checks the order.
constexpr CallInfo kCalls[] = {
    // call, name, countName, collective, hasOp, hasRoot, send, sendExtent, recv, recvExtent
    {Call::AllReduce, "ncclAllReduce", "count", Collective::AllReduce, true, false, PassedBy::EveryRank, Extent::Count,
     PassedBy::EveryRank, Extent::Count},
    {Call::AllGather, "ncclAllGather", "sendcount", Collective::AllGather, false, false, PassedBy::EveryRank,
     Extent::Count, PassedBy::EveryRank, Extent::CountPerRank},
    {Call::ReduceScatter, "ncclReduceScatter", "recvcount", Collective::ReduceScatter, true, false, PassedBy::EveryRank,
     Extent::CountPerRank, PassedBy::EveryRank, Extent::Count},
    {Call::Broadcast, "ncclBroadcast", "count", Collective::Broadcast, false, true, PassedBy::Root, Extent::Count,
     PassedBy::EveryRank, Extent::Count},
    {Call::Reduce, "ncclReduce", "count", Collective::Reduce, true, true, PassedBy::EveryRank, Extent::Count,
     PassedBy::Root, Extent::Count},
    {Call::AllToAll, "ncclAlltoAll", "count", Collective::AllToAll, false, false, PassedBy::EveryRank,
     Extent::CountPerRank, PassedBy::EveryRank, Extent::CountPerRank},
    {Call::Gather, "ncclGather", "count", Collective::Gather, false, true, PassedBy::EveryRank, Extent::Count,
     PassedBy::Root, Extent::CountPerRank},
    {Call::Scatter, "ncclScatter", "count", Collective::Scatter, false, true, PassedBy::Root, Extent::CountPerRank,
     PassedBy::EveryRank, Extent::Count},
    {Call::Send, "ncclSend", "count", Collective::SendRecv, false, true, PassedBy::EveryRank, Extent::Count,
     PassedBy::Nobody, Extent::Count},
    {Call::Recv, "ncclRecv", "count", Collective::SendRecv, false, true, PassedBy::Nobody, Extent::Count,
     PassedBy::EveryRank, Extent::Count},
};

constexpr bool rowsInEnumOrder() {
  for (size_t i = 0; i < sizeof(kCalls) / sizeof(kCalls[0]); ++i) {
    if (static_cast<size_t>(kCalls[i].call) != i) return false;
  }
  return static_cast<size_t>(Call::Recv) + 1 == sizeof(kCalls) / sizeof(kCalls[0]);
}
static_assert(rowsInEnumOrder(), "kCalls has one row per Call, in the enum's order");

bool validType(ncclDataType_t type) { return type >= ncclInt8 && type < ncclNumTypes; }

/// A built-in operator, or a PreMulSum operator of `comm` made for `type`.
bool validOp(ncclComm* comm, ncclRedOp_t op, ncclDataType_t type, std::string& problem) {
  if (op >= ncclSum && op < ncclNumOps) return true;
  std::lock_guard<std::mutex> lock(comm->mutex);
  auto it = comm->preMulSumOps.find(op);
  if (it == comm->preMulSumOps.end()) {
    problem = concat("reduction operator ", static_cast<int>(op), " is neither built in nor made by ",
                     "ncclRedOpCreatePreMulSum on this communicator");
    return false;
  }
  if (it->second.type != type) {
    problem = concat("reduction operator ", static_cast<int>(op), " was made for data type ",
                     static_cast<int>(it->second.type), ", not ", static_cast<int>(type));
    return false;
  }
  return true;
}

/// Whether a buffer of `extent` holds at most ext::kMaxCallBytes bytes (so that its size neither wraps
/// nor wraps any size derived from it); else sets `problem`. Every rank checks both buffers, whether it
/// passes them or not, so that all ranks refuse the same call.
bool fitsInBytes(const CallInfo& info, Extent extent, size_t count, int nRanks, size_t typeSize, const char* buffer,
                 std::string& problem) {
  const bool perRank = extent == Extent::CountPerRank;
  uint64_t bytes = 0;
  if (ext::callBytes(count, perRank ? static_cast<uint64_t>(nRanks) : 1, typeSize, bytes)) return true;
  problem = concat(info.countName, " ", count, perRank ? concat(" x ", nRanks, " ranks") : std::string(), " x ",
                   typeSize, "-byte elements is more than the ", ext::kMaxCallBytes,
                   " bytes a buffer of one call may hold (the size of ", buffer, ")");
  return false;
}

}  // namespace

const CallInfo& callInfo(Call call) { return kCalls[static_cast<size_t>(call)]; }

ncclResult_t checkArguments(const Task& task, std::string& problem) {
  const CallInfo& info = callInfo(task.call);
  ncclComm* comm = task.comm;
  if (info.hasRoot && (task.root < 0 || task.root >= comm->nRanks)) {
    problem = concat(info.call == Call::Send || info.call == Call::Recv ? "peer " : "root ", task.root,
                     " is not a rank of this communicator of ", comm->nRanks);
    return ncclInvalidArgument;
  }
  if (!validType(task.type)) {
    problem = concat("data type ", static_cast<int>(task.type), " is not an ncclDataType_t");
    return ncclInvalidArgument;
  }
  if (info.hasOp && !validOp(comm, task.op, task.type, problem)) return ncclInvalidArgument;
  const size_t typeSize = collectives::dataTypeSize(static_cast<collectives::DataType>(task.type));
  if (info.send != PassedBy::Nobody &&
      !fitsInBytes(info, info.sendExtent, task.count, comm->nRanks, typeSize, "sendbuff", problem)) {
    return ncclInvalidArgument;
  }
  if (info.recv != PassedBy::Nobody &&
      !fitsInBytes(info, info.recvExtent, task.count, comm->nRanks, typeSize, "recvbuff", problem)) {
    return ncclInvalidArgument;
  }
  if (task.count == 0) return ncclSuccess;
  auto passes = [&](PassedBy who) {
    return who == PassedBy::EveryRank || (who == PassedBy::Root && comm->rank == task.root);
  };
  if (passes(info.send) && task.send == nullptr) {
    problem = "sendbuff is NULL";
    return ncclInvalidArgument;
  }
  if (passes(info.recv) && task.recv == nullptr) {
    problem = "recvbuff is NULL";
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

}  // namespace mscclpp::nccl
