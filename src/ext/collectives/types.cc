// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <cstring>
#include <mscclpp/collectives.hpp>

#include "common/checks.hpp"

namespace mscclpp {
namespace collectives {

size_t dataTypeSize(DataType type) {
  switch (type) {
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
      return 1;
    case DataType::Float16:
    case DataType::Bfloat16:
      return 2;
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Float32:
      return 4;
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Float64:
      return 8;
  }
  MSCCLPP_THROW(InvalidUsage, "unknown data type ", static_cast<int>(type));
}

const char* dataTypeName(DataType type) {
  switch (type) {
    case DataType::Int8:
      return "int8";
    case DataType::Uint8:
      return "uint8";
    case DataType::Int32:
      return "int32";
    case DataType::Uint32:
      return "uint32";
    case DataType::Int64:
      return "int64";
    case DataType::Uint64:
      return "uint64";
    case DataType::Float16:
      return "half";
    case DataType::Float32:
      return "float";
    case DataType::Float64:
      return "double";
    case DataType::Bfloat16:
      return "bfloat16";
    case DataType::Fp8E4M3:
      return "f8e4m3";
    case DataType::Fp8E5M2:
      return "f8e5m2";
  }
  return "unknown";
}

DataType toCollectivesDataType(mscclpp::DataType type) {
  switch (type) {
    case mscclpp::DataType::INT32:
      return DataType::Int32;
    case mscclpp::DataType::UINT32:
      return DataType::Uint32;
    case mscclpp::DataType::FLOAT16:
      return DataType::Float16;
    case mscclpp::DataType::FLOAT32:
      return DataType::Float32;
    case mscclpp::DataType::BFLOAT16:
      return DataType::Bfloat16;
    case mscclpp::DataType::FP8_E4M3:
      return DataType::Fp8E4M3;
    case mscclpp::DataType::FP8_E5M2:
      return DataType::Fp8E5M2;
  }
  MSCCLPP_THROW(InvalidUsage, "unknown data type ", static_cast<int>(type));
}

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
    case Algorithm::ZeroCopy:
      return "zerocopy";
  }
  return "unknown";
}

}  // namespace collectives
}  // namespace mscclpp
