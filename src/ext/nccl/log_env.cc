// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Programs that load this library in place of NCCL ask for its messages with NCCL_DEBUG (VERSION,
// WARN, INFO, ABORT, TRACE: the same words as MSCCLPP_DEBUG) and NCCL_DEBUG_FILE. Where the MSCCLPP_*
// logging variables are unset, they are set from those when the library loads, before anything
// reads the configuration.
//
// Why a setenv and not a field of Env: configuration is read one way, by Env (include/mscclpp/env.hpp)
// once per process, and the logger is configured from it on first use. Env and the logger are objects
// of the common layer, and this library is made of the very objects libmscclpp.so is made of; an Env
// that read NCCL_DEBUG would make libmscclpp.so obey a variable meant for NVIDIA's NCCL too. So this
// library, and only it, gives Env the MSCCLPP_* names it reads. What it sets is visible to the rest
// of the process (libmscclpp.so there logs the same way) and to its children, as docs/nccl.md says.

#include <cstdlib>

namespace {

/// Sets `name` to the value of `from` unless `name`, or `unless` (the newer name of the same
/// setting, which wins over it), is set already.
void copyUnlessSet(const char* name, const char* unless, const char* from) {
  const char* value = std::getenv(from);
  if (value == nullptr || std::getenv(unless) != nullptr) return;
  setenv(name, value, /*overwrite=*/0);
}

__attribute__((constructor)) void logFromNcclEnvironment() {
  copyUnlessSet("MSCCLPP_DEBUG", "MSCCLPP_LOG_LEVEL", "NCCL_DEBUG");
  copyUnlessSet("MSCCLPP_DEBUG_FILE", "MSCCLPP_LOG_FILE", "NCCL_DEBUG_FILE");
}

}  // namespace
