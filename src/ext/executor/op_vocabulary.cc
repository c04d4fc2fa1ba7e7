// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/executor/op_vocabulary.hpp"

#include <map>

#include "common/checks.hpp"

namespace mscclpp::executor {

const char* opName(OpType type) {
  switch (type) {
    case OpType::Nop:
      return "nop";
    case OpType::Barrier:
      return "barrier";
    case OpType::Put:
      return "put";
    case OpType::PutPackets:
      return "ppkt";
    case OpType::ReadPutPackets:
      return "rppkt";
    case OpType::PutWithSignal:
      return "pws";
    case OpType::PutWithSignalAndFlush:
      return "pwsf";
    case OpType::Get:
      return "get";
    case OpType::Copy:
      return "copy";
    case OpType::CopyPackets:
      return "cpkt";
    case OpType::UnpackPackets:
      return "upkt";
    case OpType::Signal:
      return "signal";
    case OpType::Wait:
      return "wait";
    case OpType::Flush:
      return "flush";
    case OpType::Reduce:
      return "re";
    case OpType::ReducePackets:
      return "repkt";
    case OpType::ReduceCopyPackets:
      return "recpkt";
    case OpType::ReduceSend:
      return "res";
    case OpType::ReduceSendPackets:
      return "respkt";
    case OpType::ReduceCopySendPackets:
      return "recspkt";
    case OpType::ReadReduce:
      return "rre";
    case OpType::ReadReduceSend:
      return "rres";
    case OpType::RelaxedSignal:
      return "rlxsignal";
    case OpType::RelaxedWait:
      return "rlxwait";
    case OpType::Pipeline:
      return "pipeline";
    case OpType::SemRelease:
      return "sem_release";
    case OpType::SemAcquire:
      return "sem_acquire";
  }
  return "?";
}

std::optional<OpType> opByName(const std::string& name) {
  static const std::map<std::string, OpType> byName = [] {
    std::map<std::string, OpType> names;
    for (int t = 0; t <= static_cast<int>(kLastOp); ++t) names.emplace(opName(OpType(t)), OpType(t));
    return names;
  }();
  auto it = byName.find(name);
  if (it == byName.end()) return std::nullopt;
  return it->second;
}

OpShape shapeOf(OpType type) {
  using K = OpShape::Kind;
  switch (type) {
    case OpType::Nop:
    case OpType::Barrier:
    case OpType::Pipeline:
    case OpType::SemRelease:
    case OpType::SemAcquire:
      return {K::None, K::None, false, false, false};
    case OpType::Signal:
    case OpType::Wait:
    case OpType::Flush:
    case OpType::RelaxedSignal:
    case OpType::RelaxedWait:
      return {K::None, K::None, true, false, false};
    case OpType::Put:
    case OpType::PutWithSignal:
    case OpType::PutWithSignalAndFlush:
      return {K::Local, K::Remote, false, false, false};
    case OpType::PutPackets:
    case OpType::ReadPutPackets:
      return {K::Local, K::Remote, false, true, false};
    case OpType::Get:
      return {K::Remote, K::Local, false, false, false};
    case OpType::Copy:
      return {K::Local, K::Local, false, false, false};
    case OpType::CopyPackets:
    case OpType::UnpackPackets:
      return {K::Local, K::Local, false, true, false};
    case OpType::Reduce:
      return {K::LocalThenLocal, K::Local, false, false, true};
    case OpType::ReduceSend:
      return {K::LocalThenLocal, K::LocalThenRemote, false, false, true};
    case OpType::ReducePackets:
      return {K::LocalThenLocal, K::Local, false, true, true};
    case OpType::ReduceSendPackets:
      return {K::LocalThenLocal, K::LocalThenRemote, false, true, true};
    case OpType::ReduceCopyPackets:
      return {K::LocalThenLocal, K::LocalThenLocal, false, true, true};
    case OpType::ReduceCopySendPackets:
      return {K::LocalThenLocal, K::LocalLocalThenRemote, false, true, true};
    case OpType::ReadReduce:
      return {K::LocalThenRemote, K::Local, false, false, true};
    case OpType::ReadReduceSend:
      return {K::LocalThenRemote, K::LocalThenRemote, false, false, true};
  }
  MSCCLPP_THROW(InternalError, "operation type ", static_cast<int>(type), " is not an OpType");
}

const char* bufferName(BufferType type) {
  switch (type) {
    case BufferType::Input:
      return "input";
    case BufferType::Output:
      return "output";
    case BufferType::Scratch:
      return "scratch";
  }
  return "?";
}

const char* channelName(ChannelType type) {
  switch (type) {
    case ChannelType::None:
      return "none";
    case ChannelType::Memory:
      return "memory";
    case ChannelType::Port:
      return "port";
  }
  return "?";
}

}  // namespace mscclpp::executor
