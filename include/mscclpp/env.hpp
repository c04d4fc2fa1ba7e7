// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_ENV_HPP_
#define MSCCLPP_ENV_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

namespace mscclpp {

class EnvBuilder;

/// The library's configuration from environment variables, read once per process by `env()`.
/// Boolean variables are true for any value except "0". A value that cannot be parsed leaves the
/// default and is reported as a WARN under the ENV log subsystem. Thread-safe (immutable).
class Env {
  // Declared first so that they exist while the fields below are read.
  std::set<std::string> present_;  // names of the logging variables that were set, for precedence
  std::string problems_;           // values that could not be parsed, reported once the logger exists

 public:
  /// Where variables are read from: getenv for env(), a map in tests.
  using Lookup = std::function<const char*(const char* name)>;

  /// MSCCLPP_DEBUG: legacy log level (VERSION, WARN, INFO, ABORT, TRACE); MSCCLPP_LOG_LEVEL wins.
  const std::string debug;
  /// MSCCLPP_DEBUG_SUBSYS: legacy form of MSCCLPP_LOG_SUBSYS.
  const std::string debugSubsys;
  /// MSCCLPP_DEBUG_FILE: legacy form of MSCCLPP_LOG_FILE.
  const std::string debugFile;
  /// MSCCLPP_LOG_LEVEL: DEBUG, INFO, WARN, ERROR or NONE. Default "ERROR".
  const std::string logLevel;
  /// MSCCLPP_LOG_SUBSYS: comma list of ENV GPU NET CONN MEM PROXY EXEC NCCL, or ALL; "^" excludes.
  /// Default "ALL".
  const std::string logSubsys;
  /// MSCCLPP_LOG_FILE: log to this file (%h: host name, %p: pid) instead of stderr.
  const std::string logFile;
  /// MSCCLPP_HCA_DEVICES: comma list of IB device names; entry i is used for Transport::IB<i>.
  const std::string hcaDevices;
  /// MSCCLPP_IBV_SO: the ibverbs library to dlopen (default libibverbs.so, then libibverbs.so.1).
  const std::string ibvSo;
  /// MSCCLPP_HOSTID: host identity used instead of host name + boot id (e.g. in containers).
  const std::string hostid;
  /// MSCCLPP_SOCKET_FAMILY: AF_INET or AF_INET6 to force the bootstrap's address family.
  const std::string socketFamily;
  /// MSCCLPP_SOCKET_IFNAME: interface(s) for the bootstrap; "^" excludes, "=" matches exactly.
  const std::string socketIfname;
  /// MSCCLPP_COMM_ID (deprecated): "ip:port" whose subnet picks the bootstrap interface.
  const std::string commId;
  /// MSCCLPP_EXECUTION_PLAN_DIR. Default "$HOME/.cache/mscclpp_default".
  const std::string executionPlanDir;
  /// MSCCLPP_NPKIT_DUMP_DIR.
  const std::string npkitDumpDir;
  /// MSCCLPP_CUDAIPC_USE_DEFAULT_STREAM: CudaIpc host-side copies use the default stream. Default false.
  const bool cudaIpcUseDefaultStream;
  /// MSCCLPP_NCCL_LIB_PATH: NCCL library used for fallback operations.
  const std::string ncclSharedLibPath;
  /// MSCCLPP_FORCE_NCCL_FALLBACK_OPERATION: all, or a comma list of broadcast, allreduce,
  /// reducescatter, allgather.
  const std::string forceNcclFallbackOperation;
  /// MSCCLPP_DISABLE_CHANNEL_CACHE. Default false.
  const bool disableChannelCache;
  /// MSCCLPP_FORCE_DISABLE_NVLS. Default false.
  const bool forceDisableNvls;
  /// MSCCLPP_IPC_HANDLE_TYPES: comma list of runtime, posixfd, fabric restricting the GPU IPC handle
  /// types exported and imported. Default "" (all).
  const std::string ipcHandleTypes;
  /// MSCCLPP_BOOTSTRAP_TIMEOUT: seconds, the bootstrap deadline when `TcpBootstrap::initialize` is
  /// called without one. Default 30.
  const int64_t bootstrapTimeoutSec;
  /// MSCCLPP_ETHERNET_WRITE_TIMEOUT: seconds a write on an Ethernet connection may make no progress
  /// (the peer reads nothing) before it fails with Error(Timeout); negative: no limit. Default: the
  /// bootstrap timeout.
  const int64_t ethernetWriteTimeoutSec;
  /// MSCCLPP_ENABLE_NVLS: NVLink SHARP (multicast) objects may be created only when this is true and
  /// the GPU advertises multicast (see switch_channel.hpp). Default false.
  const bool enableNvls;
  /// MSCCLPP_COLL_SCRATCH_BYTES: bytes of scratch per rank for the collectives' staged path; a number
  /// with an optional K, M or G suffix (powers of 1024). Default 64M.
  const uint64_t collScratchBytes;
  /// MSCCLPP_COLL_MAX_BLOCKS: most thread blocks one collective launch uses, 1 to 1024. Default 0: the
  /// collectives choose from the number of ranks sharing the GPU.
  const int64_t collMaxBlocks;
  /// MSCCLPP_COLL_LL_MAX_BYTES: the largest segment x (ranks - 1) the collectives send as LL packets
  /// when they choose the algorithm themselves; a size as for MSCCLPP_COLL_SCRATCH_BYTES. Default 768K.
  const uint64_t collLLMaxBytes;
  /// MSCCLPP_COLL_ALGO: "auto", "ll", "ll2" (two-shot LL, all-reduce), "staged",
  /// "zerocopy" or "ce" (copy engines; both on registered buffers, or on buffers of a call captured into
  /// a graph, only): the algorithm every collective that has it runs with.
  /// Default "auto".
  const std::string collAlgo;
  /// MSCCLPP_COLL_TUNING_FILE: a tuning table for the collectives (Config::tuningFile). Default "" (none).
  const std::string collTuningFile;
  /// MSCCLPP_COLL_CAPTURE_CACHE: how many of its allocations each rank lets its peers map when collectives
  /// on unregistered buffers are captured into a CUDA graph (so that the graph runs them zero-copy), 0 to
  /// 65536; 0 turns capture-time registration off (docs/collectives.md, Capture-time registration).
  /// Default 256.
  const int64_t collCaptureCache;
  /// MSCCLPP_DEPENDENT_LAUNCH: the executor and the collectives launch their kernels as programmatic
  /// dependent launches where the GPU has them (compute capability 9.0 and later): each is set up while
  /// the kernel before it on the stream runs. 0: plain launches. Default 1.
  const bool dependentLaunch;

 private:
  explicit Env(const Lookup& lookup);
  friend class EnvBuilder;
  friend std::shared_ptr<Env> env();
};

/// The process-wide configuration, read from the environment on first call.
std::shared_ptr<Env> env();

}  // namespace mscclpp

#endif  // MSCCLPP_ENV_HPP_
