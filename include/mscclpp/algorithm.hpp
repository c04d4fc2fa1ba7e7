// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Collective algorithms written by users, behind one call: an Algorithm bundles a one-time set-up, a
// per-buffer context (connections, registered memory, channels) cached by a key the algorithm derives
// from the call's buffers, and the kernel launch. An AlgorithmCollection holds algorithms by collective
// and name and picks one per call through a selector; AlgorithmCollectionBuilder is the process-wide
// place where builders and selectors are gathered before a collection is built. Source-compatible with
// MSCCL++ 0.8; where MSCCL++ would call through an empty function or dereference an empty Algorithm,
// these throw Error(InvalidUsage) saying which (docs/compatibility.md).

#ifndef MSCCLPP_ALGORITHM_HPP_
#define MSCCLPP_ALGORITHM_HPP_

#include <functional>
#include <memory>
#include <mscclpp/executor.hpp>
#include <mscclpp/memory_channel.hpp>
#include <mscclpp/port_channel.hpp>
#include <mscclpp/switch_channel.hpp>
#include <mscclpp/utils.hpp>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace mscclpp {

/// What an algorithm keeps for one set of buffers: its rank layout and whatever its context initializer
/// built (channels, their device handles, semaphores, registered memories), plus `extras` for anything
/// else. The library only stores it and hands it back to the algorithm's kernel function.
class AlgorithmCtx {
 public:
  int rank;
  int workSize;
  int nRanksPerNode;

  std::vector<mscclpp::RegisteredMemory> registeredMemories;
  std::vector<mscclpp::MemoryChannel> memoryChannels;
  std::vector<mscclpp::SwitchChannel> switchChannels;
  std::vector<mscclpp::PortChannel> portChannels;
  std::vector<std::shared_ptr<mscclpp::NvlsConnection>> nvlsConnections;
  std::shared_ptr<mscclpp::DeviceHandle<mscclpp::MemoryChannel>> memoryChannelDeviceHandles;
  std::shared_ptr<mscclpp::DeviceHandle<mscclpp::SwitchChannel>> switchChannelDeviceHandles;
  std::shared_ptr<mscclpp::DeviceHandle<mscclpp::PortChannel>> portChannelDeviceHandles;
  std::vector<std::shared_ptr<mscclpp::MemoryDevice2DeviceSemaphore>> memorySemaphores;
  std::vector<std::shared_ptr<mscclpp::Host2DeviceSemaphore>> hostSemaphores;

  std::unordered_map<std::string, std::shared_ptr<void>> extras;
};

/// The key under which an Algorithm caches a context: the buffers (typically the bases of their
/// allocations) and sizes it was built for, and a tag of the algorithm's choosing.
struct AlgorithmCtxKey {
  void* baseSendBuff;
  void* baseRecvBuff;
  size_t baseSendSize;
  size_t baseRecvSize;
  int tag;

  bool operator==(const AlgorithmCtxKey& other) const {
    return baseSendBuff == other.baseSendBuff && baseRecvBuff == other.baseRecvBuff &&
           baseSendSize == other.baseSendSize && baseRecvSize == other.baseRecvSize && tag == other.tag;
  }
};

class AlgorithmImpl;

/// A named algorithm for one collective. Copies share one state: the set-up runs once for all of them
/// and the contexts are shared. launch() may be called from several threads; the set-up and the
/// creation of a context run under a lock of the algorithm's, the kernel function outside it.
class Algorithm {
 public:
  /// Run once, by the first launch: connections, proxies, anything every context shares. May be empty
  /// (nothing to set up).
  using InitFunc = std::function<void(std::shared_ptr<mscclpp::Communicator>,
                                      std::unordered_map<std::string, std::shared_ptr<void>>&)>;
  /// Launches the kernels of one call on `stream` with the call's context; its return value is
  /// launch()'s (an ncclResult_t, for algorithms the NCCL API runs).
  using KernelFunc = std::function<int(const std::shared_ptr<AlgorithmCtx>, const void*, void*, size_t, DataType,
                                       cudaStream_t, std::unordered_map<std::string, std::shared_ptr<void>>&)>;
  /// Builds the context for a key not seen before (collective: every rank's launch reaches it for the
  /// same call). Must not return null.
  using ContextInitFunc = std::function<std::shared_ptr<AlgorithmCtx>(std::shared_ptr<mscclpp::Communicator>,
                                                                      const void*, void*, size_t, DataType)>;
  /// The key of a call's context.
  using ContextKeyGenFunc =
      std::function<AlgorithmCtxKey(const void* input, void* output, size_t count, DataType dtype)>;

  /// Throws Error(InvalidUsage) naming the algorithm where kernelFunc, contextInitFunc or
  /// contextKeyGenFunc is empty.
  Algorithm(std::string name, std::string collective, InitFunc initFunc, KernelFunc kernelFunc,
            ContextInitFunc contextInitFunc, ContextKeyGenFunc contextKeyGenFunc);
  /// An empty algorithm: what a selector returns for "none of mine".
  Algorithm() = default;

  /// Runs the set-up if no launch has yet, finds or builds the context of the call's key, and returns
  /// what the kernel function returns. Throws Error(InvalidUsage) on an empty algorithm and where the
  /// context initializer returns null; what the functions throw passes through (a set-up that threw
  /// runs again at the next launch).
  int launch(std::shared_ptr<mscclpp::Communicator> comm, const void* input, void* output, size_t count, DataType dtype,
             cudaStream_t stream, std::unordered_map<std::string, std::shared_ptr<void>>& extras);
  bool isEmpty();
  /// Throw Error(InvalidUsage) on an empty algorithm.
  std::string name() const;
  std::string collective() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};
}  // namespace mscclpp

namespace std {

template <>
struct hash<mscclpp::AlgorithmCtxKey> {
  std::size_t operator()(const mscclpp::AlgorithmCtxKey& key) const {
    std::size_t seed = 42;
    mscclpp::detail::hashCombine(seed, key.baseSendBuff);
    mscclpp::detail::hashCombine(seed, key.baseRecvBuff);
    mscclpp::detail::hashCombine(seed, key.baseSendSize);
    mscclpp::detail::hashCombine(seed, key.baseRecvSize);
    mscclpp::detail::hashCombine(seed, key.tag);
    return seed;
  }
};
}  // namespace std

namespace mscclpp {

/// Makes one Algorithm; registered with AlgorithmCollectionBuilder, it is asked by every build().
class AlgorithmBuilder {
 public:
  virtual ~AlgorithmBuilder() = default;
  virtual Algorithm build() = 0;
};

/// Picks the algorithm of a call from the algorithms by collective and name, or returns an empty one.
/// `messageSize` is in bytes.
using AlgoSelectFunc = std::function<Algorithm(
    const std::unordered_map<std::string, std::unordered_map<std::string, Algorithm>>& algoMapByCollective,
    std::string collective, const void* input, void* output, size_t messageSize, DataType dtype, int nRanksPerNode,
    int worldSize)>;

/// Algorithms by collective and name, with the selectors that pick among them. Not synchronized:
/// register before the calls that select.
class AlgorithmCollection {
 public:
  AlgorithmCollection() = default;

  /// The selector's choice; where it has none or chose none, the fallback selector's; where that has
  /// none either, an empty Algorithm.
  Algorithm selectAlgorithm(const std::string& collective, const void* input, void* output, size_t messageSize,
                            DataType dtype, int nRanksPerNode, int worldSize);

  /// Adds `algorithm` as `algoName` of `collective`, replacing one of that name. Throws
  /// Error(InvalidUsage) for an empty algorithm.
  void registerAlgorithm(const std::string collective, const std::string algoName, Algorithm algorithm);

 private:
  std::unordered_map<std::string, std::unordered_map<std::string, Algorithm>> algoMapByCollective_;
  AlgoSelectFunc algoSelector_ = nullptr;
  AlgoSelectFunc fallbackAlgoSelector_ = nullptr;

  friend class AlgorithmCollectionBuilder;
};

/// The process-wide gathering point of algorithm builders and selectors. Thread-safe.
class AlgorithmCollectionBuilder {
 public:
  static std::shared_ptr<AlgorithmCollectionBuilder> getInstance();

  /// Throws Error(InvalidUsage) for a null builder.
  void addAlgorithmBuilder(std::shared_ptr<AlgorithmBuilder> builder);

  /// The selector every collection built afterwards asks first.
  void setAlgorithmSelector(AlgoSelectFunc selector);

  /// The selector asked where the first one returns an empty algorithm.
  void setFallbackAlgorithmSelector(AlgoSelectFunc selector);

  /// A new collection holding what every builder added so far builds (under the built algorithm's
  /// collective and name; a later builder's algorithm replaces an earlier one of the same name) and the
  /// two selectors. Throws Error(InvalidUsage) naming the builder's position where one builds an empty
  /// algorithm.
  std::shared_ptr<AlgorithmCollection> build();

 private:
  AlgorithmCollectionBuilder() = default;
  std::mutex mutex_;
  std::vector<std::shared_ptr<AlgorithmBuilder>> algoBuilders_;
  AlgoSelectFunc algoSelector_ = nullptr;
  AlgoSelectFunc fallbackAlgoSelector_ = nullptr;
};

}  // namespace mscclpp

#endif  // MSCCLPP_ALGORITHM_HPP_
