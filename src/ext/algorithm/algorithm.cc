// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Algorithm, AlgorithmCollection and AlgorithmCollectionBuilder (include/mscclpp/algorithm.hpp): a
// registry of user algorithms and the cache of their per-buffer contexts. Nothing here touches a GPU;
// the algorithms' own functions do.

#include <mscclpp/algorithm.hpp>
#include <utility>

#include "common/checks.hpp"

namespace mscclpp {

class Algorithm::Impl {
 public:
  Impl(std::string name, std::string collective, InitFunc init, KernelFunc kernel, ContextInitFunc contextInit,
       ContextKeyGenFunc contextKey)
      : name(std::move(name)),
        collective(std::move(collective)),
        init(std::move(init)),
        kernel(std::move(kernel)),
        contextInit(std::move(contextInit)),
        contextKey(std::move(contextKey)) {}

  /// The context of `key`, after the set-up; both under `mutex`, so that two threads launching at once
  /// neither run the set-up twice nor build one context twice.
  std::shared_ptr<AlgorithmCtx> context(const std::shared_ptr<Communicator>& comm, const AlgorithmCtxKey& key,
                                        const void* input, void* output, size_t count, DataType dtype,
                                        std::unordered_map<std::string, std::shared_ptr<void>>& extras) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!initialized) {
      if (init) init(comm, extras);
      initialized = true;
    }
    auto it = contexts.find(key);
    if (it != contexts.end()) return it->second;
    std::shared_ptr<AlgorithmCtx> ctx = contextInit(comm, input, output, count, dtype);
    MSCCLPP_CHECK_USAGE(ctx != nullptr, "algorithm '", name, "' (", collective,
                        "): its context initializer returned no context");
    contexts.emplace(key, ctx);
    return ctx;
  }

  const std::string name;
  const std::string collective;
  const InitFunc init;
  const KernelFunc kernel;
  const ContextInitFunc contextInit;
  const ContextKeyGenFunc contextKey;

  std::mutex mutex;
  bool initialized = false;
  std::unordered_map<AlgorithmCtxKey, std::shared_ptr<AlgorithmCtx>> contexts;
};

Algorithm::Algorithm(std::string name, std::string collective, InitFunc initFunc, KernelFunc kernelFunc,
                     ContextInitFunc contextInitFunc, ContextKeyGenFunc contextKeyGenFunc) {
  const char* missing = !kernelFunc          ? "kernel function"
                        : !contextInitFunc   ? "context initializer"
                        : !contextKeyGenFunc ? "context key function"
                                             : nullptr;
  MSCCLPP_CHECK_USAGE(missing == nullptr, "algorithm '", name, "' (", collective, "): no ", missing);
  impl_ = std::make_shared<Impl>(std::move(name), std::move(collective), std::move(initFunc), std::move(kernelFunc),
                                 std::move(contextInitFunc), std::move(contextKeyGenFunc));
}

int Algorithm::launch(std::shared_ptr<Communicator> comm, const void* input, void* output, size_t count, DataType dtype,
                      cudaStream_t stream, std::unordered_map<std::string, std::shared_ptr<void>>& extras) {
  MSCCLPP_CHECK_USAGE(impl_ != nullptr, "launch of an empty Algorithm (a selector's \"none\")");
  const AlgorithmCtxKey key = impl_->contextKey(input, output, count, dtype);
  std::shared_ptr<AlgorithmCtx> ctx = impl_->context(comm, key, input, output, count, dtype, extras);
  return impl_->kernel(ctx, input, output, count, dtype, stream, extras);
}

bool Algorithm::isEmpty() { return impl_ == nullptr; }

std::string Algorithm::name() const {
  MSCCLPP_CHECK_USAGE(impl_ != nullptr, "name() of an empty Algorithm");
  return impl_->name;
}

std::string Algorithm::collective() const {
  MSCCLPP_CHECK_USAGE(impl_ != nullptr, "collective() of an empty Algorithm");
  return impl_->collective;
}

Algorithm AlgorithmCollection::selectAlgorithm(const std::string& collective, const void* input, void* output,
                                               size_t messageSize, DataType dtype, int nRanksPerNode, int worldSize) {
  Algorithm algorithm;
  if (algoSelector_) {
    algorithm =
        algoSelector_(algoMapByCollective_, collective, input, output, messageSize, dtype, nRanksPerNode, worldSize);
  }
  if (algorithm.isEmpty() && fallbackAlgoSelector_) {
    algorithm = fallbackAlgoSelector_(algoMapByCollective_, collective, input, output, messageSize, dtype,
                                      nRanksPerNode, worldSize);
  }
  return algorithm;
}

void AlgorithmCollection::registerAlgorithm(const std::string collective, const std::string algoName,
                                            Algorithm algorithm) {
  MSCCLPP_CHECK_USAGE(!algorithm.isEmpty(), "registerAlgorithm: '", algoName, "' of ", collective,
                      " is an empty Algorithm");
  algoMapByCollective_[collective][algoName] = std::move(algorithm);
}

std::shared_ptr<AlgorithmCollectionBuilder> AlgorithmCollectionBuilder::getInstance() {
  static const std::shared_ptr<AlgorithmCollectionBuilder> instance(new AlgorithmCollectionBuilder());
  return instance;
}

void AlgorithmCollectionBuilder::addAlgorithmBuilder(std::shared_ptr<AlgorithmBuilder> builder) {
  MSCCLPP_CHECK_USAGE(builder != nullptr, "addAlgorithmBuilder: null builder");
  std::lock_guard<std::mutex> lock(mutex_);
  algoBuilders_.push_back(std::move(builder));
}

void AlgorithmCollectionBuilder::setAlgorithmSelector(AlgoSelectFunc selector) {
  std::lock_guard<std::mutex> lock(mutex_);
  algoSelector_ = std::move(selector);
}

void AlgorithmCollectionBuilder::setFallbackAlgorithmSelector(AlgoSelectFunc selector) {
  std::lock_guard<std::mutex> lock(mutex_);
  fallbackAlgoSelector_ = std::move(selector);
}

std::shared_ptr<AlgorithmCollection> AlgorithmCollectionBuilder::build() {
  auto collection = std::make_shared<AlgorithmCollection>();
  std::vector<std::shared_ptr<AlgorithmBuilder>> builders;
  {
    // The builders run outside the lock: one may well use this builder itself.
    std::lock_guard<std::mutex> lock(mutex_);
    builders = algoBuilders_;
    collection->algoSelector_ = algoSelector_;
    collection->fallbackAlgoSelector_ = fallbackAlgoSelector_;
  }
  for (size_t i = 0; i < builders.size(); ++i) {
    Algorithm algorithm = builders[i]->build();
    MSCCLPP_CHECK_USAGE(!algorithm.isEmpty(), "AlgorithmCollectionBuilder::build: builder ", i, " of ", builders.size(),
                        " built an empty Algorithm");
    collection->registerAlgorithm(algorithm.collective(), algorithm.name(), algorithm);
  }
  return collection;
}

}  // namespace mscclpp
