// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <cstring>
#include <mscclpp/collectives.hpp>

#include "common/checks.hpp"

namespace mscclpp {
namespace collectives {

ReduceOp::ReduceOp(Kind kind) : kind(kind) {
  MSCCLPP_CHECK_USAGE(kind != Kind::PreMulSum,
                      "PreMulSum needs a scalar: use ReduceOp::preMulSumHost or ReduceOp::preMulSumDevice");
}

ReduceOp ReduceOp::preMulSumHost(const void* scalar, DataType type) {
  MSCCLPP_CHECK_USAGE(scalar != nullptr, "preMulSumHost: null scalar");
  ReduceOp op;
  op.kind = Kind::PreMulSum;
  op.residence = ScalarResidence::Host;
  std::memcpy(&op.hostScalarBits, scalar, dataTypeSize(type));
  return op;
}

ReduceOp ReduceOp::preMulSumDevice(const void* deviceScalar) {
  MSCCLPP_CHECK_USAGE(deviceScalar != nullptr, "preMulSumDevice: null scalar");
  ReduceOp op;
  op.kind = Kind::PreMulSum;
  op.residence = ScalarResidence::Device;
  op.deviceScalar = deviceScalar;
  return op;
}

const char* reduceOpName(ReduceOp::Kind kind) {
  switch (kind) {
    case ReduceOp::Kind::Sum:
      return "sum";
    case ReduceOp::Kind::Prod:
      return "prod";
    case ReduceOp::Kind::Max:
      return "max";
    case ReduceOp::Kind::Min:
      return "min";
    case ReduceOp::Kind::Avg:
      return "avg";
    case ReduceOp::Kind::PreMulSum:
      return "premulsum";
  }
  return "unknown";
}

const char* collectiveName(Collective collective) {
  switch (collective) {
    case Collective::AllReduce:
      return "allreduce";
    case Collective::AllGather:
      return "allgather";
    case Collective::ReduceScatter:
      return "reducescatter";
    case Collective::Broadcast:
      return "broadcast";
    case Collective::Reduce:
      return "reduce";
    case Collective::AllToAll:
      return "alltoall";
    case Collective::AllToAllv:
      return "alltoallv";
    case Collective::Gather:
      return "gather";
    case Collective::Scatter:
      return "scatter";
    case Collective::SendRecv:
      return "sendrecv";
  }
  return "unknown";
}

const char* algorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Auto:
      return "auto";
    case Algorithm::LLOneShot:
      return "ll";
    case Algorithm::Staged:
      return "staged";
  }
  return "unknown";
}

}  // namespace collectives
}  // namespace mscclpp
