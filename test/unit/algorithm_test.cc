// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Algorithm, AlgorithmCollection and AlgorithmCollectionBuilder (include/mscclpp/algorithm.hpp): the
// set-up run once, contexts built once per key and handed to the kernel function, the selectors'
// order, the builders, and the errors where MSCCL++ would crash. The algorithms here launch nothing,
// so no GPU and no communicator are needed.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mscclpp/algorithm.hpp>
#include <mscclpp/errors.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/invalid_usage.hpp"

using mscclpp::Algorithm;
using mscclpp::AlgorithmCollection;
using mscclpp::AlgorithmCollectionBuilder;
using mscclpp::AlgorithmCtx;
using mscclpp::AlgorithmCtxKey;
using mscclpp::DataType;
using mscclpp::test::invalidUsage;
using Extras = std::unordered_map<std::string, std::shared_ptr<void>>;
using AlgoMap = std::unordered_map<std::string, std::unordered_map<std::string, Algorithm>>;

namespace {

/// How often an algorithm's functions ran, and what the kernel function last received. The kernel
/// function runs outside the algorithm's lock, so concurrent launches write `last*` under `mutex`.
struct Counts {
  std::atomic<int> inits{0}, contexts{0}, kernels{0};
  std::mutex mutex;
  std::shared_ptr<AlgorithmCtx> lastContext;
  const void* lastInput = nullptr;
};

/// An algorithm whose context key is (input, output, count) and whose contexts carry their
/// creation number in `rank`; its kernel function returns count + 1.
Algorithm countingAlgorithm(std::shared_ptr<Counts> counts, const std::string& name = "counting",
                            const std::string& collective = "allreduce") {
  return Algorithm(
      name, collective, [counts](std::shared_ptr<mscclpp::Communicator>, Extras&) { ++counts->inits; },
      [counts](const std::shared_ptr<AlgorithmCtx> ctx, const void* input, void*, size_t count, DataType, cudaStream_t,
               Extras&) {
        ++counts->kernels;
        std::lock_guard<std::mutex> lock(counts->mutex);
        counts->lastContext = ctx;
        counts->lastInput = input;
        return static_cast<int>(count) + 1;
      },
      [counts](std::shared_ptr<mscclpp::Communicator>, const void*, void*, size_t, DataType) {
        auto ctx = std::make_shared<AlgorithmCtx>();
        ctx->rank = counts->contexts++;
        return ctx;
      },
      [](const void* input, void* output, size_t count, DataType) {
        return AlgorithmCtxKey{const_cast<void*>(input), output, count, count, 0};
      });
}

int launch(Algorithm& algorithm, const void* input, void* output, size_t count) {
  Extras extras;
  return algorithm.launch(nullptr, input, output, count, DataType::FLOAT32, nullptr, extras);
}

/// A context initializer that builds an empty context, a key function with one key for every call,
/// and a kernel function that returns `result`: for algorithms whose tests are about something else.
std::shared_ptr<AlgorithmCtx> emptyContext(std::shared_ptr<mscclpp::Communicator>, const void*, void*, size_t,
                                           DataType) {
  return std::make_shared<AlgorithmCtx>();
}

AlgorithmCtxKey oneKey(const void*, void*, size_t, DataType) { return AlgorithmCtxKey{nullptr, nullptr, 0, 0, 0}; }

Algorithm::KernelFunc returning(int result) {
  return [result](const std::shared_ptr<AlgorithmCtx>, const void*, void*, size_t, DataType, cudaStream_t, Extras&) {
    return result;
  };
}

}  // namespace

TEST(Algorithm, SetUpRunsOnceAndEachKeyGetsOneContext) {
  auto counts = std::make_shared<Counts>();
  Algorithm algorithm = countingAlgorithm(counts);
  char a[8], b[8];
  EXPECT_EQ(launch(algorithm, a, b, 4), 5) << "launch returns what the kernel function returns";
  EXPECT_EQ(launch(algorithm, a, b, 4), 5);
  EXPECT_EQ(counts->inits, 1);
  EXPECT_EQ(counts->contexts, 1) << "the same key reuses its context";
  EXPECT_EQ(counts->kernels, 2);
  EXPECT_EQ(counts->lastContext->rank, 0);
  EXPECT_EQ(launch(algorithm, b, a, 4), 5);
  EXPECT_EQ(counts->contexts, 2) << "another key builds a context of its own";
  EXPECT_EQ(counts->lastContext->rank, 1);
  EXPECT_EQ(counts->lastInput, b);
  EXPECT_EQ(launch(algorithm, a, b, 4), 5);
  EXPECT_EQ(counts->lastContext->rank, 0) << "the first key's context is still there";
  EXPECT_EQ(counts->inits, 1);
}

TEST(Algorithm, CopiesShareTheSetUpAndTheContexts) {
  auto counts = std::make_shared<Counts>();
  Algorithm first = countingAlgorithm(counts);
  Algorithm second = first;
  char a[8], b[8];
  launch(first, a, b, 2);
  launch(second, a, b, 2);
  EXPECT_EQ(counts->inits, 1);
  EXPECT_EQ(counts->contexts, 1);
  EXPECT_EQ(second.name(), "counting");
  EXPECT_EQ(second.collective(), "allreduce");
}

TEST(Algorithm, ConcurrentLaunchesBuildOneContextPerKey) {
  auto counts = std::make_shared<Counts>();
  Algorithm algorithm = countingAlgorithm(counts);
  char a[8], b[8];
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Algorithm mine = algorithm;
      for (int i = 0; i < 200; ++i) launch(mine, (t + i) % 2 ? a : b, a, 1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counts->inits, 1);
  EXPECT_EQ(counts->contexts, 2);
  EXPECT_EQ(counts->kernels, 1600);
}

TEST(Algorithm, ExtrasReachTheSetUpAndTheKernelFunction) {
  int seenBySetUp = 0, seenByKernel = 0;
  Algorithm algorithm(
      "extras", "broadcast",
      [&](std::shared_ptr<mscclpp::Communicator>, Extras& extras) {
        seenBySetUp = *std::static_pointer_cast<int>(extras.at("root"));
      },
      [&](const std::shared_ptr<AlgorithmCtx>, const void*, void*, size_t, DataType, cudaStream_t, Extras& extras) {
        seenByKernel = *std::static_pointer_cast<int>(extras.at("root"));
        extras["answer"] = std::make_shared<int>(42);
        return 0;
      },
      emptyContext, oneKey);
  Extras extras{{"root", std::make_shared<int>(3)}};
  EXPECT_EQ(algorithm.launch(nullptr, nullptr, nullptr, 0, DataType::INT32, nullptr, extras), 0);
  EXPECT_EQ(seenBySetUp, 3);
  EXPECT_EQ(seenByKernel, 3);
  EXPECT_EQ(*std::static_pointer_cast<int>(extras.at("answer")), 42) << "the caller sees what the kernel added";
}

TEST(Algorithm, ASetUpThatThrewRunsAgainAtTheNextLaunch) {
  int attempts = 0;
  Algorithm algorithm(
      "flaky", "allgather",
      [&](std::shared_ptr<mscclpp::Communicator>, Extras&) {
        if (++attempts == 1) throw std::runtime_error("peer not there yet");
      },
      returning(0), emptyContext, oneKey);
  EXPECT_THROW(launch(algorithm, nullptr, nullptr, 0), std::runtime_error);
  EXPECT_EQ(launch(algorithm, nullptr, nullptr, 0), 0);
  EXPECT_EQ(attempts, 2);
}

TEST(Algorithm, AnEmptySetUpIsNothingToSetUp) {
  Algorithm algorithm("no-init", "allreduce", nullptr, returning(7), emptyContext, oneKey);
  EXPECT_EQ(launch(algorithm, nullptr, nullptr, 0), 7);
}

TEST(Algorithm, MissingFunctionsAreRefusedAtConstruction) {
  const Algorithm::KernelFunc kernel = returning(0);
  const Algorithm::ContextInitFunc context = emptyContext;
  const Algorithm::ContextKeyGenFunc key = oneKey;
  EXPECT_NE(
      invalidUsage([&] { Algorithm("a", "allreduce", nullptr, nullptr, context, key); }).find("no kernel function"),
      std::string::npos);
  EXPECT_NE(
      invalidUsage([&] { Algorithm("b", "allreduce", nullptr, kernel, nullptr, key); }).find("no context initializer"),
      std::string::npos);
  const std::string missingKey = invalidUsage([&] { Algorithm("c", "allreduce", nullptr, kernel, context, nullptr); });
  EXPECT_NE(missingKey.find("no context key function"), std::string::npos) << missingKey;
  EXPECT_NE(missingKey.find("'c'"), std::string::npos) << "the message names the algorithm: " << missingKey;
}

TEST(Algorithm, AContextInitializerReturningNoContextIsAnError) {
  Algorithm algorithm(
      "nullctx", "allreduce", nullptr, returning(0),
      [](std::shared_ptr<mscclpp::Communicator>, const void*, void*, size_t, DataType) {
        return std::shared_ptr<AlgorithmCtx>();
      },
      oneKey);
  const std::string message = invalidUsage([&] { launch(algorithm, nullptr, nullptr, 0); });
  EXPECT_NE(message.find("'nullctx'"), std::string::npos) << message;
  EXPECT_NE(message.find("no context"), std::string::npos) << message;
}

TEST(Algorithm, AnEmptyAlgorithmSaysSoInsteadOfCrashing) {
  Algorithm empty;
  EXPECT_TRUE(empty.isEmpty());
  EXPECT_NE(invalidUsage([&] { launch(empty, nullptr, nullptr, 0); }).find("empty Algorithm"), std::string::npos);
  EXPECT_NE(invalidUsage([&] { (void)empty.name(); }).find("empty Algorithm"), std::string::npos);
  EXPECT_NE(invalidUsage([&] { (void)empty.collective(); }).find("empty Algorithm"), std::string::npos);
  auto counts = std::make_shared<Counts>();
  EXPECT_FALSE(countingAlgorithm(counts).isEmpty());
}

TEST(AlgorithmCtxKey, EqualKeysHashAlikeAndEveryFieldCounts) {
  int x = 0, y = 0;
  const AlgorithmCtxKey key{&x, &y, 4, 8, 1};
  std::unordered_map<AlgorithmCtxKey, int> map{{key, 1}};
  EXPECT_EQ(map.count(AlgorithmCtxKey{&x, &y, 4, 8, 1}), 1u);
  for (const AlgorithmCtxKey& other :
       {AlgorithmCtxKey{&y, &y, 4, 8, 1}, AlgorithmCtxKey{&x, &x, 4, 8, 1}, AlgorithmCtxKey{&x, &y, 5, 8, 1},
        AlgorithmCtxKey{&x, &y, 4, 9, 1}, AlgorithmCtxKey{&x, &y, 4, 8, 2}}) {
    EXPECT_FALSE(other == key);
    EXPECT_EQ(map.count(other), 0u);
  }
}

TEST(AlgorithmCollection, WithoutSelectorsNothingIsSelected) {
  // MSCCL++ calls its fallback selector unconditionally, which throws std::bad_function_call where none
  // was set; here there is no choice, which a caller tests with isEmpty().
  auto counts = std::make_shared<Counts>();
  AlgorithmCollection collection;
  collection.registerAlgorithm("allreduce", "mine", countingAlgorithm(counts, "mine"));
  EXPECT_TRUE(collection.selectAlgorithm("allreduce", nullptr, nullptr, 64, DataType::FLOAT32, 8, 8).isEmpty());
}

namespace {

/// A builder that counts its builds and makes `name` for `collective`.
class CountingBuilder : public mscclpp::AlgorithmBuilder {
 public:
  CountingBuilder(std::string name, std::string collective)
      : name_(std::move(name)), collective_(std::move(collective)) {}
  Algorithm build() override {
    ++builds;
    return countingAlgorithm(std::make_shared<Counts>(), name_, collective_);
  }
  int builds = 0;

 private:
  std::string name_, collective_;
};

class EmptyBuilder : public mscclpp::AlgorithmBuilder {
 public:
  Algorithm build() override { return Algorithm(); }
};

}  // namespace

TEST(AlgorithmCollectionBuilder, BuildsCollectionsThatSelectInOrder) {
  auto builder = AlgorithmCollectionBuilder::getInstance();
  EXPECT_EQ(builder, AlgorithmCollectionBuilder::getInstance()) << "one instance per process";
  auto small = std::make_shared<CountingBuilder>("small", "allreduce");
  auto big = std::make_shared<CountingBuilder>("big", "allreduce");
  auto gather = std::make_shared<CountingBuilder>("ring", "allgather");
  builder->addAlgorithmBuilder(small);
  builder->addAlgorithmBuilder(big);
  builder->addAlgorithmBuilder(gather);
  std::vector<std::string> asked;
  builder->setAlgorithmSelector([&](const AlgoMap& algos, std::string collective, const void*, void*, size_t bytes,
                                    DataType, int nRanksPerNode, int worldSize) {
    asked.push_back("selector " + collective);
    EXPECT_EQ(nRanksPerNode, 4);
    EXPECT_EQ(worldSize, 8);
    if (collective != "allreduce" || bytes > 1024) return Algorithm();
    return algos.at("allreduce").at("small");
  });
  builder->setFallbackAlgorithmSelector(
      [&](const AlgoMap& algos, std::string collective, const void*, void*, size_t, DataType, int, int) {
        asked.push_back("fallback " + collective);
        if (collective == "allreduce") return algos.at("allreduce").at("big");
        return Algorithm();
      });
  std::shared_ptr<AlgorithmCollection> collection = builder->build();
  EXPECT_EQ(small->builds, 1);
  EXPECT_EQ(gather->builds, 1);
  EXPECT_EQ(collection->selectAlgorithm("allreduce", nullptr, nullptr, 1024, DataType::FLOAT16, 4, 8).name(), "small");
  EXPECT_EQ(collection->selectAlgorithm("allreduce", nullptr, nullptr, 1025, DataType::FLOAT16, 4, 8).name(), "big");
  EXPECT_TRUE(collection->selectAlgorithm("allgather", nullptr, nullptr, 8, DataType::FLOAT16, 4, 8).isEmpty());
  EXPECT_EQ(asked, (std::vector<std::string>{"selector allreduce", "selector allreduce", "fallback allreduce",
                                             "selector allgather", "fallback allgather"}));
  // A second build asks every builder again and makes a collection of its own.
  std::shared_ptr<AlgorithmCollection> again = builder->build();
  EXPECT_NE(again, collection);
  EXPECT_EQ(small->builds, 2);
  // The instance is the process's: leave no selector behind for other tests.
  builder->setAlgorithmSelector(nullptr);
  builder->setFallbackAlgorithmSelector(nullptr);
  EXPECT_TRUE(builder->build()->selectAlgorithm("allreduce", nullptr, nullptr, 8, DataType::FLOAT16, 4, 8).isEmpty());
}

TEST(AlgorithmCollectionBuilder, NullAndEmptyAlgorithmsAreRefused) {
  EXPECT_NE(invalidUsage([] {
              AlgorithmCollectionBuilder::getInstance()->addAlgorithmBuilder(nullptr);
            }).find("null builder"),
            std::string::npos);
  AlgorithmCollection collection;
  EXPECT_NE(invalidUsage([&] { collection.registerAlgorithm("allreduce", "none", Algorithm()); }).find("'none'"),
            std::string::npos);
}

TEST(AlgorithmCollectionBuilder, ABuilderOfAnEmptyAlgorithmFailsTheBuild) {
  // In a child process: the builder is the process's, and a builder added to it stays.
  EXPECT_EXIT(
      {
        auto builder = AlgorithmCollectionBuilder::getInstance();
        builder->addAlgorithmBuilder(std::make_shared<CountingBuilder>("fine", "allreduce"));
        builder->addAlgorithmBuilder(std::make_shared<EmptyBuilder>());
        try {
          builder->build();
        } catch (const mscclpp::Error& e) {
          const std::string message = e.what();
          std::exit(message.find("built an empty Algorithm") != std::string::npos ? 0 : 2);
        }
        std::exit(1);
      },
      ::testing::ExitedWithCode(0), "");
}
