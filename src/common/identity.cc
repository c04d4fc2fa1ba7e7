// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/identity.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <mscclpp/env.hpp>

#include "common/checks.hpp"

namespace mscclpp {
namespace {

std::string readFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string computeHostIdentity() {
  const std::string& override = env()->hostid;
  if (!override.empty()) return override;
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, HOST_NAME_MAX);
  return std::string(name) + "|" + readFirstLine("/proc/sys/kernel/random/boot_id");
}

std::string computeProcessIdentity() {
  char link[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
  std::string ns = n > 0 ? std::string(link, n) : "pid:[unknown]";
  return std::to_string(getpid()) + "|" + ns;
}

}  // namespace

uint64_t hashString(const std::string& text) {
  uint64_t hash = 5381;
  for (unsigned char c : text) hash = (hash * 33) ^ c;
  return hash;
}

const std::string& hostIdentity() {
  static const std::string identity = computeHostIdentity();
  return identity;
}

// Not cached across fork(): a forked child must not claim its parent's identity.
const std::string& processIdentity() {
  thread_local pid_t cachedPid = -1;
  thread_local std::string identity;
  if (cachedPid != getpid()) {
    identity = computeProcessIdentity();
    cachedPid = getpid();
  }
  return identity;
}

uint64_t getHostHash() {
  static const uint64_t hash = hashString(hostIdentity());
  return hash;
}

uint64_t getPidHash() { return hashString(processIdentity()); }

uint64_t randomU64() {
  for (;;) {
    uint64_t value = 0;
    size_t got = 0;
    while (got < sizeof(value)) {
      ssize_t n = getrandom(reinterpret_cast<char*>(&value) + got, sizeof(value) - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw SysError("getrandom() failed", errno);
      got += static_cast<size_t>(n);
    }
    if (value != 0) return value;
  }
}

}  // namespace mscclpp
