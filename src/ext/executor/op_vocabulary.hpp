// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The operations of the plan format: their names in plan files, and the operands each one takes; and
// the names of what operations work on (buffers, channels) as messages spell them.

#ifndef MSCCLPP_EXT_EXECUTOR_OP_VOCABULARY_HPP_
#define MSCCLPP_EXT_EXECUTOR_OP_VOCABULARY_HPP_

#include <optional>
#include <string>

#include "ext/executor/device_plan.hpp"

namespace mscclpp::executor {

/// The last enumerator of OpType: names are looked up over [OpType::Nop, kLastOp]. An operation added
/// to OpType also needs its name in opName, whose switch does not compile without it.
constexpr OpType kLastOp = OpType::SemAcquire;

/// The name plan files give the operation ("put", "rres", "sem_acquire", ...).
const char* opName(OpType type);

/// The operation a plan file's name stands for; nothing for a name the format does not define.
std::optional<OpType> opByName(const std::string& name);

/// What an operation's operands must look like.
struct OpShape {
  enum Kind {
    None,                 // no operands
    Local,                // local chunks
    Remote,               // peers' chunks
    LocalThenRemote,      // one local entry, then peers' chunks
    LocalThenLocal,       // local chunks (the first one is the "own" data of a reduction)
    LocalLocalThenRemote  // two local entries, then peers' chunks
  };
  Kind src;
  Kind dst;
  bool needsChannels;  // signal-like: channel_ids name the channels to act on
  bool packets;        // reads or writes packets in scratch
  bool reduces;
};

OpShape shapeOf(OpType type);

/// "input", "output", "scratch".
const char* bufferName(BufferType type);

/// "none", "memory", "port".
const char* channelName(ChannelType type);

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_OP_VOCABULARY_HPP_
