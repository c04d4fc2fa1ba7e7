// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Plan selection: handles, requests, and the process-wide registry.

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mscclpp/env.hpp>
#include <mscclpp/executor.hpp>
#include <mutex>
#include <sstream>

#include "common/checks.hpp"
#include "ext/executor/plan.hpp"

namespace mscclpp {

bool ExecutionRequest::isInPlace() const {
  if (inputBuffer == outputBuffer) return true;
  if (collective == "allgather") {
    return static_cast<const char*>(outputBuffer) + static_cast<size_t>(rank) * messageSize == inputBuffer;
  }
  return false;
}

std::shared_ptr<ExecutionPlanHandle> ExecutionPlanHandle::create(
    const std::string& id, int worldSize, int nRanksPerNode, std::shared_ptr<ExecutionPlan> plan,
    const std::unordered_map<std::string, uint64_t>& tags) {
  auto handle = std::make_shared<ExecutionPlanHandle>();
  handle->id = id;
  handle->constraint = {worldSize, nRanksPerNode};
  handle->plan = std::move(plan);
  handle->tags = tags;
  return handle;
}

bool ExecutionPlanHandle::match(const ExecutionRequest& request) {
  if (!plan) return false;
  const size_t size = request.collective == "allgather" ? request.messageSize * static_cast<size_t>(request.worldSize)
                                                        : request.messageSize;
  return constraint.worldSize == request.worldSize && constraint.nRanksPerNode == request.nRanksPerNode &&
         plan->collective() == request.collective && plan->isInPlace() == request.isInPlace() &&
         size >= plan->minMessageSize() && size <= plan->maxMessageSize();
}

struct ExecutionPlanRegistry::Impl {
  std::mutex mutex;
  std::map<std::string, std::vector<std::shared_ptr<ExecutionPlanHandle>>> byCollective;
  std::map<std::string, std::shared_ptr<ExecutionPlanHandle>> byId;
  ExecutionPlanSelector selector;
  ExecutionPlanSelector defaultSelector;
};

ExecutionPlanRegistry::ExecutionPlanRegistry() : impl_(std::make_unique<Impl>()) {}

ExecutionPlanRegistry::~ExecutionPlanRegistry() = default;

std::shared_ptr<ExecutionPlanRegistry> ExecutionPlanRegistry::getInstance() {
  static std::shared_ptr<ExecutionPlanRegistry> instance(new ExecutionPlanRegistry());
  return instance;
}

void ExecutionPlanRegistry::registerPlan(const std::shared_ptr<ExecutionPlanHandle> planHandle) {
  if (!planHandle || !planHandle->plan) throw Error("registerPlan: a null plan handle", ErrorCode::ExecutorError);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->byCollective[planHandle->plan->collective()].push_back(planHandle);
  impl_->byId[planHandle->id] = planHandle;
}

std::vector<std::shared_ptr<ExecutionPlanHandle>> ExecutionPlanRegistry::getPlans(const std::string& collective) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->byCollective.find(collective);
  return it == impl_->byCollective.end() ? std::vector<std::shared_ptr<ExecutionPlanHandle>>{} : it->second;
}

std::shared_ptr<ExecutionPlanHandle> ExecutionPlanRegistry::get(const std::string& id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->byId.find(id);
  return it == impl_->byId.end() ? nullptr : it->second;
}

std::shared_ptr<ExecutionPlanHandle> ExecutionPlanRegistry::select(
    const std::string& collective, int worldSize, int nRanksPerNode, int rank, const void* sendBuffer, void* recvBuffer,
    size_t messageSize, const std::unordered_map<std::string, std::vector<uint64_t>>& hints) {
  const ExecutionRequest request{worldSize,  nRanksPerNode, rank,       sendBuffer,
                                 recvBuffer, messageSize,   collective, hints};
  std::vector<std::shared_ptr<ExecutionPlanHandle>> candidates;
  ExecutionPlanSelector selector, fallback;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    for (const auto& handle : impl_->byCollective[collective]) {
      if (handle->match(request)) candidates.push_back(handle);
    }
    selector = impl_->selector;
    fallback = impl_->defaultSelector;
  }
  // Selectors run unlocked: they may call back into the registry.
  if (selector) {
    if (auto chosen = selector(candidates, request)) return chosen;
  }
  if (fallback) {
    if (auto chosen = fallback(candidates, request)) return chosen;
  }
  LOG_INFO(EXEC, "no execution plan for ", collective, " of ", messageSize, " bytes on ", worldSize, " ranks");
  return nullptr;
}

void ExecutionPlanRegistry::setSelector(ExecutionPlanSelector selector) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->selector = std::move(selector);
}

void ExecutionPlanRegistry::setDefaultSelector(ExecutionPlanSelector selector) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->defaultSelector = std::move(selector);
}

void ExecutionPlanRegistry::loadDefaultPlans(int rank) {
  const std::string dir = env()->executionPlanDir;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) {
    LOG_INFO(EXEC, "no execution plan directory at '", dir, "'");
    return;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ostringstream id;
    id << std::hex << std::hash<std::string>()(file.string());
    if (get(id.str())) continue;
    try {
      auto plan = std::make_shared<ExecutionPlan>(file.string(), rank);
      // A plan is written for one node of as many GPUs as it lists.
      const int nGpus = static_cast<int>(ExecutionPlanAccess::impl(*plan)->gpus.size());
      registerPlan(ExecutionPlanHandle::create(id.str(), nGpus, nGpus, plan, {{"default", 1}}));
      LOG_INFO(EXEC, "loaded execution plan ", file.string(), " as ", id.str());
    } catch (const Error& e) {
      LOG_WARN(EXEC, "skipping execution plan ", file.string(), ": ", e.what());
    }
  }
}

void ExecutionPlanRegistry::clear() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->byCollective.clear();
  impl_->byId.clear();
  impl_->selector = nullptr;
  impl_->defaultSelector = nullptr;
}

}  // namespace mscclpp
