// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <mscclpp/env.hpp>

#include "common/env_builder.hpp"
#include "common/strings.hpp"

namespace mscclpp {
namespace {

std::string readString(const Env::Lookup& lookup, const char* name, const std::string& fallback) {
  const char* value = lookup(name);
  return value ? std::string(value) : fallback;
}

bool readBool(const Env::Lookup& lookup, const char* name, bool fallback) {
  const char* value = lookup(name);
  if (!value) return fallback;
  return std::string(value) != "0";
}

int64_t readInt(const Env::Lookup& lookup, const char* name, int64_t fallback, std::string& problems) {
  const char* value = lookup(name);
  if (!value) return fallback;
  char* end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(value, &end, 10);
  if (end == value || *end != '\0' || errno == ERANGE) {
    problems += concat(name, "='", value, "' is not an integer, using ", fallback, "; ");
    return fallback;
  }
  return parsed;
}

/// A byte count: a number (decimal, 0x hexadecimal) with an optional K, M or G suffix (powers of 1024,
/// either case).
uint64_t readSize(const Env::Lookup& lookup, const char* name, uint64_t fallback, std::string& problems) {
  const char* value = lookup(name);
  if (!value) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(value, &end, 0);
  uint64_t scale = 1;
  const char suffix = end != value ? static_cast<char>(std::toupper(static_cast<unsigned char>(*end))) : '\0';
  if (suffix == 'K' || suffix == 'M' || suffix == 'G') {
    scale = suffix == 'K' ? (1ull << 10) : suffix == 'M' ? (1ull << 20) : (1ull << 30);
    ++end;
  }
  if (end == value || *end != '\0' || errno == ERANGE || value[0] == '-' || parsed > UINT64_MAX / scale) {
    problems += concat(name, "='", value, "' is not a size (a number, optionally followed by K, M or G), using ",
                       fallback, "; ");
    return fallback;
  }
  return parsed * scale;
}

/// An integer in [lo, hi].
int64_t readIntIn(const Env::Lookup& lookup, const char* name, int64_t lo, int64_t hi, int64_t fallback,
                  std::string& problems) {
  if (!lookup(name)) return fallback;
  const size_t problemsBefore = problems.size();
  const int64_t value = readInt(lookup, name, fallback, problems);
  if (problems.size() != problemsBefore || (value >= lo && value <= hi)) return value;
  problems += concat(name, "=", value, " is outside [", lo, ", ", hi, "], using ", fallback, "; ");
  return fallback;
}

/// One of `choices`.
std::string readChoice(const Env::Lookup& lookup, const char* name, std::initializer_list<const char*> choices,
                       const std::string& fallback, std::string& problems) {
  const char* value = lookup(name);
  if (!value) return fallback;
  for (const char* choice : choices) {
    if (std::string(value) == choice) return value;
  }
  std::string listed;
  for (const char* choice : choices) listed += concat(listed.empty() ? "" : ", ", choice);
  problems += concat(name, "='", value, "' is not one of ", listed, ", using ", fallback, "; ");
  return fallback;
}

std::string defaultPlanDir(const Env::Lookup& lookup) {
  const char* home = lookup("HOME");
  return std::string(home ? home : "") + "/.cache/mscclpp_default";
}

const char* processLookup(const char* name) { return std::getenv(name); }

}  // namespace

Env::Env(const Lookup& lookup)
    : debug(readString(lookup, "MSCCLPP_DEBUG", "")),
      debugSubsys(readString(lookup, "MSCCLPP_DEBUG_SUBSYS", "")),
      debugFile(readString(lookup, "MSCCLPP_DEBUG_FILE", "")),
      logLevel(readString(lookup, "MSCCLPP_LOG_LEVEL", "ERROR")),
      logSubsys(readString(lookup, "MSCCLPP_LOG_SUBSYS", "ALL")),
      logFile(readString(lookup, "MSCCLPP_LOG_FILE", "")),
      hcaDevices(readString(lookup, "MSCCLPP_HCA_DEVICES", "")),
      ibvSo(readString(lookup, "MSCCLPP_IBV_SO", "")),
      hostid(readString(lookup, "MSCCLPP_HOSTID", "")),
      socketFamily(readString(lookup, "MSCCLPP_SOCKET_FAMILY", "")),
      socketIfname(readString(lookup, "MSCCLPP_SOCKET_IFNAME", "")),
      commId(readString(lookup, "MSCCLPP_COMM_ID", "")),
      executionPlanDir(readString(lookup, "MSCCLPP_EXECUTION_PLAN_DIR", defaultPlanDir(lookup))),
      npkitDumpDir(readString(lookup, "MSCCLPP_NPKIT_DUMP_DIR", "")),
      cudaIpcUseDefaultStream(readBool(lookup, "MSCCLPP_CUDAIPC_USE_DEFAULT_STREAM", false)),
      ncclSharedLibPath(readString(lookup, "MSCCLPP_NCCL_LIB_PATH", "")),
      forceNcclFallbackOperation(readString(lookup, "MSCCLPP_FORCE_NCCL_FALLBACK_OPERATION", "")),
      disableChannelCache(readBool(lookup, "MSCCLPP_DISABLE_CHANNEL_CACHE", false)),
      forceDisableNvls(readBool(lookup, "MSCCLPP_FORCE_DISABLE_NVLS", false)),
      ipcHandleTypes(readString(lookup, "MSCCLPP_IPC_HANDLE_TYPES", "")),
      bootstrapTimeoutSec(readInt(lookup, "MSCCLPP_BOOTSTRAP_TIMEOUT", 30, problems_)),
      ethernetWriteTimeoutSec(readInt(lookup, "MSCCLPP_ETHERNET_WRITE_TIMEOUT", bootstrapTimeoutSec, problems_)),
      enableNvls(readBool(lookup, "MSCCLPP_ENABLE_NVLS", false)),
      collScratchBytes(readSize(lookup, "MSCCLPP_COLL_SCRATCH_BYTES", 64ull << 20, problems_)),
      collMaxBlocks(readIntIn(lookup, "MSCCLPP_COLL_MAX_BLOCKS", 1, 1024, 0, problems_)),
      collLLMaxBytes(readSize(lookup, "MSCCLPP_COLL_LL_MAX_BYTES", 768ull << 10, problems_)),
      collAlgo(readChoice(lookup, "MSCCLPP_COLL_ALGO", {"auto", "ll", "ll2", "staged", "zerocopy", "ce"}, "auto",
                          problems_)),
      collTuningFile(readString(lookup, "MSCCLPP_COLL_TUNING_FILE", "")),
      collCaptureCache(readIntIn(lookup, "MSCCLPP_COLL_CAPTURE_CACHE", 0, 65536, 256, problems_)),
      dependentLaunch(readBool(lookup, "MSCCLPP_DEPENDENT_LAUNCH", true)) {
  for (const char* name : {"MSCCLPP_DEBUG", "MSCCLPP_DEBUG_SUBSYS", "MSCCLPP_DEBUG_FILE", "MSCCLPP_LOG_LEVEL",
                           "MSCCLPP_LOG_SUBSYS", "MSCCLPP_LOG_FILE"}) {
    if (lookup(name)) present_.insert(name);
  }
}

std::shared_ptr<Env> env() {
  // Function-local static: initialised once, thread-safe, and never re-read (the fields are const).
  static std::shared_ptr<Env> instance(new Env(processLookup));
  return instance;
}

std::shared_ptr<Env> EnvBuilder::fromMap(const std::map<std::string, std::string>& vars) {
  Env::Lookup lookup = [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  return std::shared_ptr<Env>(new Env(lookup));
}

}  // namespace mscclpp
