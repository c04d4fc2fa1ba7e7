// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// What <mscclpp/algorithm.hpp> of MSCCL++ declares, used the way its NCCL shim and its example of a
// custom all-gather use it: a builder whose algorithm captures the builder, a context with port-channel
// device handles and registered memories, a key from the buffers, a selector registered with the
// process-wide builder, and a launch with extras. Also what it brings through its includes.
#include <mscclpp/algorithm.hpp>
#include <type_traits>

namespace compat {

using mscclpp::Algorithm;
using mscclpp::AlgorithmCollection;
using mscclpp::AlgorithmCollectionBuilder;
using mscclpp::AlgorithmCtx;
using mscclpp::AlgorithmCtxKey;
using Extras = std::unordered_map<std::string, std::shared_ptr<void>>;
using AlgoMap = std::unordered_map<std::string, std::unordered_map<std::string, Algorithm>>;

static_assert(std::is_default_constructible_v<Algorithm> && std::is_copy_constructible_v<Algorithm>);
static_assert(std::is_abstract_v<mscclpp::AlgorithmBuilder>);
static_assert(std::is_default_constructible_v<AlgorithmCollection>);
static_assert(!std::is_default_constructible_v<AlgorithmCollectionBuilder>);
static_assert(std::is_same_v<decltype(&AlgorithmCollectionBuilder::getInstance),
                             std::shared_ptr<AlgorithmCollectionBuilder> (*)()>);
static_assert(std::is_same_v<decltype(&Algorithm::launch),
                             int (Algorithm::*)(std::shared_ptr<mscclpp::Communicator>, const void*, void*, size_t,
                                                mscclpp::DataType, cudaStream_t, Extras&)>);
static_assert(std::is_same_v<decltype(&Algorithm::isEmpty), bool (Algorithm::*)()>);
static_assert(std::is_same_v<decltype(&Algorithm::name), std::string (Algorithm::*)() const>);
static_assert(std::is_same_v<decltype(&AlgorithmCollection::selectAlgorithm),
                             Algorithm (AlgorithmCollection::*)(const std::string&, const void*, void*, size_t,
                                                                mscclpp::DataType, int, int)>);
static_assert(std::is_same_v<decltype(&AlgorithmCollection::registerAlgorithm),
                             void (AlgorithmCollection::*)(const std::string, const std::string, Algorithm)>);
static_assert(std::is_same_v<decltype(&AlgorithmCollectionBuilder::build),
                             std::shared_ptr<AlgorithmCollection> (AlgorithmCollectionBuilder::*)()>);
static_assert(std::is_same_v<decltype(&AlgorithmCtx::portChannelDeviceHandles),
                             std::shared_ptr<mscclpp::PortChannel::DeviceHandle> AlgorithmCtx::*>);
static_assert(std::is_same_v<decltype(&AlgorithmCtxKey::tag), int AlgorithmCtxKey::*>);

class CopyAlgoBuilder : public mscclpp::AlgorithmBuilder {
 public:
  Algorithm build() override {
    auto self = std::make_shared<CopyAlgoBuilder>();
    return Algorithm(
        "copy", "allgather",
        [self](std::shared_ptr<mscclpp::Communicator> comm, Extras&) {
          self->worldSize_ = comm->bootstrap()->getNranks();
        },
        [self](const std::shared_ptr<AlgorithmCtx> ctx, const void* input, void* output, size_t count,
               mscclpp::DataType, cudaStream_t stream, Extras& extras) {
          const size_t bytes = count * sizeof(float);
          auto scratch = std::static_pointer_cast<char>(extras.at("scratch"));
          (void)scratch;
          return cudaMemcpyAsync(static_cast<char*>(output) + ctx->rank * bytes, input, bytes, cudaMemcpyDeviceToDevice,
                                 stream) == cudaSuccess
                     ? 0
                     : 3;
        },
        [self](std::shared_ptr<mscclpp::Communicator> comm, const void* input, void* output, size_t count,
               mscclpp::DataType) {
          auto ctx = std::make_shared<AlgorithmCtx>();
          ctx->rank = comm->bootstrap()->getRank();
          ctx->workSize = comm->bootstrap()->getNranks();
          ctx->nRanksPerNode = comm->bootstrap()->getNranksPerNode();
          ctx->registeredMemories.push_back(
              comm->registerMemory(const_cast<void*>(input), count * sizeof(float), mscclpp::Transport::CudaIpc));
          ctx->registeredMemories.push_back(
              comm->registerMemory(output, count * sizeof(float) * ctx->workSize, mscclpp::Transport::CudaIpc));
          ctx->portChannelDeviceHandles = mscclpp::detail::gpuCallocShared<mscclpp::PortChannel::DeviceHandle>(1);
          ctx->extras["note"] = std::make_shared<int>(1);
          return ctx;
        },
        [self](const void* input, void* output, size_t count, mscclpp::DataType) {
          return AlgorithmCtxKey{const_cast<void*>(input), output, count * sizeof(float),
                                 count * sizeof(float) * self->worldSize_, 0};
        });
  }

 private:
  int worldSize_ = 1;
};

void registerAndRun(std::shared_ptr<mscclpp::Communicator> comm, const float* send, float* recv, size_t count,
                    cudaStream_t stream) {
  auto builder = AlgorithmCollectionBuilder::getInstance();
  builder->addAlgorithmBuilder(std::make_shared<CopyAlgoBuilder>());
  builder->setAlgorithmSelector(
      [](const AlgoMap& algos, std::string collective, const void*, void*, size_t, mscclpp::DataType, int, int) {
        if (collective != "allgather") return Algorithm();
        return algos.at(collective).at("copy");
      });
  builder->setFallbackAlgorithmSelector(
      [](const AlgoMap&, std::string, const void*, void*, size_t, mscclpp::DataType, int, int) { return Algorithm(); });
  std::shared_ptr<AlgorithmCollection> collection = builder->build();
  Algorithm algo =
      collection->selectAlgorithm("allgather", send, recv, count * sizeof(float), mscclpp::DataType::FLOAT32, 8, 8);
  if (!algo.isEmpty()) {
    Extras extras{{"scratch", std::shared_ptr<char>()}, {"scratch_size", std::make_shared<size_t>(0)}};
    (void)algo.launch(comm, send, recv, count, mscclpp::DataType::FLOAT32, stream, extras);
    (void)algo.name();
    (void)algo.collective();
  }
  AlgorithmCollection own;
  own.registerAlgorithm("allgather", "copy", algo);
  std::unordered_map<AlgorithmCtxKey, int> byKey;
  byKey[AlgorithmCtxKey{nullptr, recv, 0, 4, 1}] = 1;
  (void)(AlgorithmCtxKey{nullptr, recv, 0, 4, 1} == AlgorithmCtxKey{nullptr, recv, 0, 4, 2});
  // Through its includes: the executor, the channels, the utils.
  mscclpp::ExecutionPlanRegistry::getInstance();
  std::size_t seed = 0;
  mscclpp::detail::hashCombine(seed, 3);
}

}  // namespace compat
