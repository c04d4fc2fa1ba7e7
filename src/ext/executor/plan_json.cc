// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/executor/plan_json.hpp"

namespace mscclpp::executor {

const json& member(const json& obj, const char* key, const Where& w) {
  if (!obj.is_object()) w.fail(concat("expected an object holding '", key, "', got ", obj.type_name()));
  auto it = obj.find(key);
  if (it == obj.end()) w.fail(concat("missing key '", key, "'"));
  return *it;
}

const json* optionalMember(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

int64_t asInt(const json& v, const char* key, const Where& w, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) w.fail(concat("'", key, "' must be an integer, got ", v.type_name()));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
    w.fail(concat("'", key, "' is ", v.get<uint64_t>(), ", outside [", lo, ", ", hi, "]"));
  }
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) w.fail(concat("'", key, "' is ", x, ", outside [", lo, ", ", hi, "]"));
  return x;
}

uint64_t asU64(const json& v, const char* key, const Where& w) {
  if (!v.is_number_integer()) w.fail(concat("'", key, "' must be an integer, got ", v.type_name()));
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) w.fail(concat("'", key, "' must not be negative"));
  return v.get<uint64_t>();
}

int64_t intMember(const json& obj, const char* key, const Where& w, int64_t lo, int64_t hi) {
  return asInt(member(obj, key, w), key, w, lo, hi);
}

namespace {

bool asBool(const json& v, const char* key, const Where& w) {
  if (!v.is_boolean()) w.fail(concat("'", key, "' must be a boolean, got ", v.type_name()));
  return v.get<bool>();
}

std::string asString(const json& v, const char* key, const Where& w) {
  if (!v.is_string()) w.fail(concat("'", key, "' must be a string, got ", v.type_name()));
  return v.get<std::string>();
}

}  // namespace

bool boolMember(const json& obj, const char* key, const Where& w) { return asBool(member(obj, key, w), key, w); }

bool optionalBoolMember(const json& obj, const char* key, const Where& w, bool absent) {
  const json* v = optionalMember(obj, key);
  return v == nullptr ? absent : asBool(*v, key, w);
}

std::string stringMember(const json& obj, const char* key, const Where& w) {
  return asString(member(obj, key, w), key, w);
}

const json& arrayMember(const json& obj, const char* key, const Where& w) {
  const json& v = member(obj, key, w);
  if (!v.is_array()) w.fail(concat("'", key, "' must be an array, got ", v.type_name()));
  return v;
}

BufferType bufferType(const json& v, const char* key, const Where& w) {
  const std::string s = asString(v, key, w);
  if (s == "i") return BufferType::Input;
  if (s == "o") return BufferType::Output;
  if (s == "s") return BufferType::Scratch;
  w.fail(concat("'", key, "' is \"", s, "\": the buffer types are \"i\", \"o\" and \"s\""));
}

ChannelType channelType(const json& v, const char* key, const Where& w, bool allowNone) {
  const std::string s = asString(v, key, w);
  if (s == "memory") return ChannelType::Memory;
  if (s == "port") return ChannelType::Port;
  if (s == "none" && allowNone) return ChannelType::None;
  if (s == "switch") w.fail("switch channels (NVLS multicast) are not supported");
  w.fail(concat("'", key, "' is \"", s, "\": the channel types are \"memory\" and \"port\"",
                allowNone ? " (or \"none\")" : ""));
}

}  // namespace mscclpp::executor
