// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Checked reads of a plan's JSON values: each one checks presence, type and range, and refuses with
// Error(ExecutorError) prefixed by the place in the plan (plan_error.hpp) and naming the key.

#ifndef MSCCLPP_EXT_EXECUTOR_PLAN_JSON_HPP_
#define MSCCLPP_EXT_EXECUTOR_PLAN_JSON_HPP_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ext/executor/device_plan.hpp"
#include "ext/executor/plan_error.hpp"

namespace mscclpp::executor {

using json = nlohmann::json;

/// The member `key` of the object `obj`.
const json& member(const json& obj, const char* key, const Where& w);

/// The member `key` of `obj`, or null where it has none.
const json* optionalMember(const json& obj, const char* key);

/// `v` (the value of `key`) as an integer in [lo, hi].
int64_t asInt(const json& v, const char* key, const Where& w, int64_t lo, int64_t hi);

/// `v` (the value of `key`) as a non-negative integer of up to 64 bits.
uint64_t asU64(const json& v, const char* key, const Where& w);

int64_t intMember(const json& obj, const char* key, const Where& w, int64_t lo, int64_t hi);
bool boolMember(const json& obj, const char* key, const Where& w);
/// The boolean `key` of `obj`, or `absent` where it has none.
bool optionalBoolMember(const json& obj, const char* key, const Where& w, bool absent);
std::string stringMember(const json& obj, const char* key, const Where& w);
const json& arrayMember(const json& obj, const char* key, const Where& w);

/// A buffer type as plan files write it: "i", "o" or "s".
BufferType bufferType(const json& v, const char* key, const Where& w);

/// A channel type as plan files write it: "memory", "port", and "none" where `allowNone`. "switch" is
/// refused: switch channels need NVLS multicast, which is never used.
ChannelType channelType(const json& v, const char* key, const Where& w, bool allowNone);

}  // namespace mscclpp::executor

#endif  // MSCCLPP_EXT_EXECUTOR_PLAN_JSON_HPP_
