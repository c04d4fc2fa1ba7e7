// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/nccl/real_nccl.hpp"

#include <dlfcn.h>

#include <atomic>
#include <mscclpp/env.hpp>
#include <string_view>

#include "common/logger.hpp"
#include "common/strings.hpp"

namespace mscclpp::nccl {

namespace {

struct Loaded {
  RealNccl lib;
  bool usable = false;
  std::string problem;
};

Loaded load() {
  Loaded loaded;
  const std::string& path = env()->ncclSharedLibPath;
  if (path.empty()) {
    loaded.problem = "no real NCCL to forward to: MSCCLPP_NCCL_LIB_PATH is not set";
    return loaded;
  }
  // Never unloaded: communicators of the real NCCL may live until the process exits.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.problem = concat("MSCCLPP_NCCL_LIB_PATH=", path, " cannot be opened: ", why ? why : "unknown reason");
    LOG_WARN(NCCL, loaded.problem);
    return loaded;
  }
  std::string missing;
  auto resolve = [&](const char* name) {
    void* symbol = dlsym(handle, name);
    // Optional: ncclCommRevoke is newer than the API this library follows (2.28.3), and NCCLs before 2.28
    // have no device communicators (then ncclDevCommCreate says so).
    const std::string_view n(name);
    if (symbol == nullptr && n != "ncclCommRevoke" && n != "ncclDevCommCreate" && n != "ncclDevCommDestroy") {
      missing += concat(missing.empty() ? "" : ", ", name);
    }
    return symbol;
  };
#define MSCCLPP_NCCL_REAL_RESOLVE(ret, name, params, args) \
  loaded.lib.name = reinterpret_cast<ret(*) params>(resolve("nccl" #name));
  MSCCLPP_NCCL_FOR_EACH_FUNCTION(MSCCLPP_NCCL_REAL_RESOLVE)
#undef MSCCLPP_NCCL_REAL_RESOLVE
  if (!missing.empty()) {
    loaded.problem = concat("the NCCL at ", path, " lacks ", missing);
  } else if (loaded.lib.GetVersion == &ncclGetVersion) {
    // The path names this library (dlopen returned the copy already loaded): forwarding would loop.
    loaded.problem = concat("MSCCLPP_NCCL_LIB_PATH=", path, " is this library itself, not a real NCCL");
  } else if (loaded.lib.GetVersion(&loaded.lib.version) != ncclSuccess) {
    loaded.problem = concat("ncclGetVersion of the NCCL at ", path, " failed");
  } else {
    loaded.lib.path = path;
    loaded.usable = true;
    LOG_INFO(NCCL, "forwarding what this library does not do itself to NCCL ", loaded.lib.version, " at ", path);
    return loaded;
  }
  LOG_WARN(NCCL, loaded.problem);
  return loaded;
}

std::atomic<const RealNccl*> opened{nullptr};

const Loaded& loadedOnce() {
  static const Loaded loaded = load();
  if (loaded.usable) opened.store(&loaded.lib, std::memory_order_release);
  return loaded;
}

}  // namespace

const RealNccl* realNccl() {
  const Loaded& loaded = loadedOnce();
  return loaded.usable ? &loaded.lib : nullptr;
}

const RealNccl* openedRealNccl() { return opened.load(std::memory_order_acquire); }

const std::string& realNcclProblem() { return loadedOnce().problem; }

}  // namespace mscclpp::nccl
