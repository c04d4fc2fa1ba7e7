// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/env.hpp>
#include <type_traits>

namespace compat {

int useEnv() {
  std::shared_ptr<mscclpp::Env> env = mscclpp::env();
  static_assert(std::is_same_v<decltype(env->debug), const std::string>);
  static_assert(std::is_same_v<decltype(env->forceDisableNvls), const bool>);
  static_assert(std::is_same_v<decltype(env->cudaIpcUseDefaultStream), const bool>);
  return static_cast<int>(env->debug.size() + env->debugSubsys.size() + env->debugFile.size() + env->logLevel.size() +
                          env->logSubsys.size() + env->logFile.size() + env->hcaDevices.size() + env->ibvSo.size() +
                          env->hostid.size() + env->socketFamily.size() + env->socketIfname.size() +
                          env->commId.size() + env->executionPlanDir.size() + env->npkitDumpDir.size() +
                          env->ncclSharedLibPath.size() + env->forceNcclFallbackOperation.size()) +
         env->cudaIpcUseDefaultStream + env->disableChannelCache + env->forceDisableNvls;
}

}  // namespace compat
