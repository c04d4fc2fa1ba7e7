// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The NCCL operations (collectives and point-to-point), one row each in one table: the API function's
// name, the collective it runs, which arguments it takes and which ranks pass which buffer, keyed on
// the call like NCCL's own argument check (its per-call record in collectives.cc, read by
// ArgsCheck). One function checks any call's arguments from its row, so a new call is one row.

#ifndef MSCCLPP_EXT_NCCL_CALLS_HPP_
#define MSCCLPP_EXT_NCCL_CALLS_HPP_

#include <mscclpp/nccl.h>

#include <mscclpp/collectives.hpp>
#include <string>

struct ncclComm;

namespace mscclpp::nccl {

enum class Call { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, Gather, Scatter, Send, Recv };

/// Which ranks pass a buffer: none (ncclSend has no receive buffer), only the root, or every rank.
enum class PassedBy { Nobody, Root, EveryRank };

/// How many elements a buffer holds: the call's count, or count for each rank of the communicator.
enum class Extent { Count, CountPerRank };

/// One NCCL call's row.
struct CallInfo {
  Call call;
  /// The API function, as failures name it: "ncclAllReduce".
  const char* name;
  /// Its count parameter's name in nccl.h: "count", "sendcount" or "recvcount".
  const char* countName;
  collectives::Collective collective;
  bool hasOp;
  /// A root, or the peer of ncclSend and ncclRecv.
  bool hasRoot;
  PassedBy send;
  Extent sendExtent;
  PassedBy recv;
  Extent recvExtent;
};

const CallInfo& callInfo(Call call);

/// One call's arguments; `root` is the peer of Send and Recv, `op` is unused where the row has none.
struct Task {
  Call call;
  ncclComm* comm;
  const void* send;
  void* recv;
  size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  cudaStream_t stream;
};

/// Checks `task`'s arguments against its row on its (ready) communicator, in NCCL's order (root, data
/// type, operator) and then what NCCL leaves unchecked: the buffers' byte sizes (count x type size,
/// and count x ranks x type size for a buffer of CountPerRank) must fit in size_t on every rank, and
/// the buffers this rank passes must not be NULL when count > 0. Returns ncclSuccess, or
/// ncclInvalidArgument with `problem` saying which argument is wrong.
ncclResult_t checkArguments(const Task& task, std::string& problem);

}  // namespace mscclpp::nccl

#endif  // MSCCLPP_EXT_NCCL_CALLS_HPP_
