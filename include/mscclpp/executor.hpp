// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The executor: runs a collective described by a JSON execution plan (docs/executor.md) with one
// interpreter kernel. A plan names, per GPU, the channels to build, the peers' buffers to map, and for
// each thread block the list of operations it performs on chunks of the input, output and scratch
// buffers. Source-compatible with MSCCL++ 0.8.

#ifndef MSCCLPP_EXECUTOR_HPP_
#define MSCCLPP_EXECUTOR_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core.hpp"
#include "gpu.hpp"
#include "gpu_data_types.hpp"

namespace mscclpp {

/// The packet format of LL ("low latency") plans: 4 bytes of data per 8-byte packet, or 8 per 16.
enum class PacketType {
  LL8,
  LL16,
};

/// One rank's view of a plan file. The constructor reads and checks the whole file (every field the
/// format defines, every index against what it indexes) and throws Error(ExecutorError) naming the
/// file, the rank, the thread block, the operation and what is wrong.
class ExecutionPlan {
 public:
  ExecutionPlan(const std::string& planPath, int rank);
  ~ExecutionPlan() = default;

  std::string name() const;
  std::string collective() const;
  size_t minMessageSize() const;
  size_t maxMessageSize() const;
  bool isInPlace() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;

  friend class Executor;
  friend struct ExecutionPlanAccess;
};

/// What a caller asks a plan registry for.
struct ExecutionRequest {
  int worldSize;
  int nRanksPerNode;
  int rank;
  const void* inputBuffer;
  void* outputBuffer;
  size_t messageSize;
  const std::string& collective;
  const std::unordered_map<std::string, std::vector<uint64_t>>& hints;

  /// The same buffer in and out; for allgather, the input is this rank's slot of the output.
  bool isInPlace() const;
};

/// A registered plan with the world it was written for.
struct ExecutionPlanHandle {
  struct Constraint {
    int worldSize;
    int nRanksPerNode;
  };
  std::string id;
  Constraint constraint;
  std::shared_ptr<ExecutionPlan> plan;
  std::unordered_map<std::string, uint64_t> tags;

  static std::shared_ptr<ExecutionPlanHandle> create(const std::string& id, int worldSize, int nRanksPerNode,
                                                     std::shared_ptr<ExecutionPlan> plan,
                                                     const std::unordered_map<std::string, uint64_t>& tags = {});

  /// World size, ranks per node, collective, in-place-ness and the message size range all fit (for
  /// allgather the size compared is messageSize * worldSize).
  bool match(const ExecutionRequest& request);
};

/// Picks one of the plans that match a request (or returns null to defer to the next selector).
using ExecutionPlanSelector = std::function<std::shared_ptr<ExecutionPlanHandle>(
    const std::vector<std::shared_ptr<ExecutionPlanHandle>> plans, const ExecutionRequest& request)>;

/// The process-wide set of plans, selected per request: the user's selector first, then the default.
class ExecutionPlanRegistry {
 public:
  static std::shared_ptr<ExecutionPlanRegistry> getInstance();
  ~ExecutionPlanRegistry();

  /// Error(ExecutorError) for a null handle.
  void registerPlan(const std::shared_ptr<ExecutionPlanHandle> planHandle);
  std::vector<std::shared_ptr<ExecutionPlanHandle>> getPlans(const std::string& collective);
  std::shared_ptr<ExecutionPlanHandle> get(const std::string& id);
  std::shared_ptr<ExecutionPlanHandle> select(const std::string& collective, int worldSize, int nRanksPerNode, int rank,
                                              const void* sendBuffer, void* recvBuffer, size_t messageSize,
                                              const std::unordered_map<std::string, std::vector<uint64_t>>& hints);
  void setSelector(ExecutionPlanSelector selector);
  void setDefaultSelector(ExecutionPlanSelector selector);
  /// Registers the default plans found in MSCCLPP_EXECUTION_PLAN_DIR (those that fail to load are logged
  /// and skipped).
  void loadDefaultPlans(int rank);
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ExecutionPlanRegistry();
};

/// Runs plans. The first execution of a plan with given buffers and sizes sets up its connections,
/// channels, peer mappings, semaphores and scratch (all ranks of the plan must call it together);
/// later executions with the same plan, buffers and sizes only launch the kernel, so they may be
/// captured into a CUDA graph. What no setup can run (a plan written for more ranks than the
/// communicator has, another rank's plan, null or unaligned buffers, sizes the plan cannot split) is
/// refused with Error(ExecutorError) naming the plan, before any communication.
class Executor {
 public:
  Executor(std::shared_ptr<Communicator> comm, std::shared_ptr<char> defaultScratchBuffer = nullptr);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor();

  void execute(int rank, void* sendbuff, void* recvBuff, size_t sendBuffSize, size_t recvBuffSize, DataType dataType,
               const ExecutionPlan& plan, cudaStream_t stream, PacketType packetType = PacketType::LL16);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_EXECUTOR_HPP_
