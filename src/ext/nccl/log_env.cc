// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Programs that load this library in place of NCCL ask for its messages with NCCL_DEBUG (VERSION,
// WARN, INFO, ABORT, TRACE: the same words as MSCCLPP_DEBUG) and NCCL_DEBUG_FILE. Where the
// MSCCLPP_* logging variables are unset, they are set from those before the logger first reads the
// environment, so one switch shows our messages too.

#include <cstdlib>

namespace {

void setIfUnset(const char* name, const char* value) {
  if (value != nullptr && std::getenv(name) == nullptr) setenv(name, value, 0);
}

__attribute__((constructor)) void logFromNcclEnvironment() {
  if (std::getenv("MSCCLPP_LOG_LEVEL") == nullptr) setIfUnset("MSCCLPP_DEBUG", std::getenv("NCCL_DEBUG"));
  if (std::getenv("MSCCLPP_LOG_FILE") == nullptr) setIfUnset("MSCCLPP_DEBUG_FILE", std::getenv("NCCL_DEBUG_FILE"));
}

}  // namespace
