// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What <mscclpp/executor.hpp> of MSCCL++ declares, used the way its programs use it (executor_test, the
// multi-process executor test, the NCCL shim's plan selection, the Python bindings), and what it brings
// through its includes (core.hpp, gpu.hpp).
#include <mscclpp/executor.hpp>
#include <type_traits>

namespace compat {

using mscclpp::ExecutionPlan;
using mscclpp::ExecutionPlanHandle;
using mscclpp::ExecutionPlanRegistry;
using mscclpp::ExecutionRequest;
using mscclpp::Executor;

static_assert(static_cast<int>(mscclpp::PacketType::LL8) == 0 && static_cast<int>(mscclpp::PacketType::LL16) == 1);
static_assert(!std::is_copy_constructible_v<Executor> && !std::is_copy_assignable_v<Executor>);
static_assert(std::is_constructible_v<Executor, std::shared_ptr<mscclpp::Communicator>>);
static_assert(std::is_constructible_v<ExecutionPlan, const std::string&, int>);
static_assert(std::is_copy_constructible_v<ExecutionPlan>);

// The signatures the Python bindings take the address of.
static_assert(std::is_same_v<
              decltype(&ExecutionPlanHandle::create),
              std::shared_ptr<ExecutionPlanHandle> (*)(const std::string&, int, int, std::shared_ptr<ExecutionPlan>,
                                                       const std::unordered_map<std::string, uint64_t>&)>);
static_assert(
    std::is_same_v<decltype(&ExecutionPlanRegistry::getInstance), std::shared_ptr<ExecutionPlanRegistry> (*)()>);
static_assert(std::is_same_v<decltype(&ExecutionPlanRegistry::registerPlan),
                             void (ExecutionPlanRegistry::*)(std::shared_ptr<ExecutionPlanHandle>)>);
static_assert(
    std::is_same_v<decltype(&ExecutionPlanRegistry::getPlans),
                   std::vector<std::shared_ptr<ExecutionPlanHandle>> (ExecutionPlanRegistry::*)(const std::string&)>);
static_assert(std::is_same_v<decltype(&ExecutionPlanRegistry::get),
                             std::shared_ptr<ExecutionPlanHandle> (ExecutionPlanRegistry::*)(const std::string&)>);
static_assert(std::is_same_v<decltype(&ExecutionPlanRegistry::setSelector),
                             void (ExecutionPlanRegistry::*)(mscclpp::ExecutionPlanSelector)>);
static_assert(std::is_same_v<decltype(&ExecutionPlanRegistry::setDefaultSelector),
                             void (ExecutionPlanRegistry::*)(mscclpp::ExecutionPlanSelector)>);
static_assert(std::is_same_v<decltype(&ExecutionPlanRegistry::clear), void (ExecutionPlanRegistry::*)()>);
static_assert(std::is_same_v<decltype(&ExecutionRequest::worldSize), int ExecutionRequest::*>);
static_assert(std::is_same_v<decltype(&ExecutionRequest::messageSize), size_t ExecutionRequest::*>);
static_assert(
    std::is_same_v<decltype(&ExecutionPlanHandle::Constraint::nRanksPerNode), int ExecutionPlanHandle::Constraint::*>);
static_assert(std::is_same_v<decltype(&ExecutionPlanHandle::tags),
                             std::unordered_map<std::string, uint64_t> ExecutionPlanHandle::*>);

// A selector in the NCCL shim's shape: a free function taking the candidates by value.
std::shared_ptr<ExecutionPlanHandle> firstPlan(const std::vector<std::shared_ptr<ExecutionPlanHandle>> plans,
                                               const ExecutionRequest&) {
  return plans.empty() ? nullptr : plans[0];
}

// executor_test and the multi-process test: a plan per rank, executed in place on a stream (also
// while the stream is captured into a graph), with and without a packet type.
void runPlan(int rank, std::shared_ptr<mscclpp::Bootstrap> bootstrap, const std::string& planPath,
             std::shared_ptr<char> sendbuff, size_t bufferSize, cudaStream_t stream) {
  auto communicator = std::make_shared<mscclpp::Communicator>(bootstrap);
  std::shared_ptr<Executor> executor = std::make_shared<Executor>(communicator);
  Executor withScratch(communicator, std::shared_ptr<char>());
  ExecutionPlan plan(planPath, rank);
  executor->execute(rank, sendbuff.get(), sendbuff.get(), bufferSize, bufferSize, mscclpp::DataType::FLOAT16, plan,
                    stream, mscclpp::PacketType::LL8);
  executor->execute(rank, sendbuff.get(), sendbuff.get(), bufferSize, bufferSize, mscclpp::DataType::FLOAT16, plan,
                    stream);
  withScratch.execute(rank, sendbuff.get(), sendbuff.get(), bufferSize, bufferSize, mscclpp::DataType::BFLOAT16, plan,
                      stream);
  std::string name = plan.name();
  std::string collective = plan.collective();
  size_t sizes = plan.minMessageSize() + plan.maxMessageSize();
  bool inPlace = plan.isInPlace();
  (void)name, (void)collective, (void)sizes, (void)inPlace;
  // Through gpu.hpp.
  cudaGraph_t graph = nullptr;
  (void)cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  (void)cudaStreamEndCapture(stream, &graph);
}

// The NCCL shim: the registry singleton, default plans, selection by request, and plans of its own.
void selectPlan(int rank, int worldSize, int nRanksPerNode, const void* send, void* recv, size_t bytes,
                std::shared_ptr<ExecutionPlan> plan) {
  std::shared_ptr<ExecutionPlanRegistry> registry = ExecutionPlanRegistry::getInstance();
  registry->loadDefaultPlans(rank);
  registry->setDefaultSelector(firstPlan);
  registry->setSelector([](const std::vector<std::shared_ptr<ExecutionPlanHandle>> plans,
                           const ExecutionRequest& request) -> std::shared_ptr<ExecutionPlanHandle> {
    if (request.isInPlace() || request.hints.count("mode") != 0) return nullptr;
    return plans.empty() ? nullptr : plans.back();
  });
  std::shared_ptr<ExecutionPlanHandle> handle =
      ExecutionPlanHandle::create("mine", worldSize, nRanksPerNode, plan, {{"default", 1}});
  std::shared_ptr<ExecutionPlanHandle> untagged = ExecutionPlanHandle::create("plain", worldSize, nRanksPerNode, plan);
  registry->registerPlan(handle);
  registry->registerPlan(untagged);
  const std::unordered_map<std::string, std::vector<uint64_t>> hints;
  std::shared_ptr<ExecutionPlanHandle> chosen =
      registry->select("allreduce", worldSize, nRanksPerNode, rank, send, recv, bytes, hints);
  if (chosen) {
    ExecutionPlanHandle::Constraint constraint = chosen->constraint;
    std::string id = chosen->id;
    std::shared_ptr<ExecutionPlan> chosenPlan = chosen->plan;
    uint64_t tag = chosen->tags.count("default") ? chosen->tags.at("default") : 0;
    (void)constraint.worldSize, (void)id, (void)chosenPlan, (void)tag;
  }
  const std::string collective = "allreduce";
  ExecutionRequest request{worldSize, nRanksPerNode, rank, send, recv, bytes, collective, hints};
  bool matches = handle->match(request);
  (void)matches;
  std::vector<std::shared_ptr<ExecutionPlanHandle>> all = registry->getPlans("allreduce");
  std::shared_ptr<ExecutionPlanHandle> byId = registry->get("mine");
  (void)all, (void)byId;
  registry->clear();
}

}  // namespace compat
