// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

#include "common/checks.hpp"
#include "sync/semaphore_impl.hpp"
#include "transport/access.hpp"
#include "transport/connection.hpp"

namespace mscclpp {
namespace {

/// The state receive futures share with the communicator; they may outlive it.
struct Exchange {
  std::shared_ptr<Bootstrap> bootstrap;
  std::mutex sendMutex;  // keeps each (peer, tag) stream in call order across threads

  std::mutex mutex;  // guards everything below
  /// Per (peer, tag): the latest receive, which the next one waits for (i-th send matches i-th receive).
  std::map<std::pair<int, int>, std::shared_future<void>> lastReceive;
  /// Messages to this rank itself, per tag, in send order.
  std::map<int, std::deque<std::vector<char>>> selfMailbox;

  void send(const std::vector<char>& bytes, int peer, int tag) {
    if (peer == bootstrap->getRank()) {
      std::lock_guard<std::mutex> lock(mutex);
      selfMailbox[tag].push_back(bytes);
      return;
    }
    std::lock_guard<std::mutex> lock(sendMutex);
    bootstrap->send(bytes, peer, tag);
  }

  std::vector<char> receive(int peer, int tag) {
    if (peer == bootstrap->getRank()) {
      std::lock_guard<std::mutex> lock(mutex);
      auto& queue = selfMailbox[tag];
      MSCCLPP_CHECK_USAGE(!queue.empty(), "Communicator: a receive from this rank itself (tag ", tag,
                          ") has no matching earlier send");
      std::vector<char> bytes = std::move(queue.front());
      queue.pop_front();
      return bytes;
    }
    std::vector<char> bytes;
    bootstrap->recv(bytes, peer, tag);
    return bytes;
  }
};

struct ConnectionOrigin {
  std::weak_ptr<BaseConnection> connection;
  int remoteRank;
  int tag;
};

/// Which peer and tag each connection was made with; shared with connect futures, which fill it.
class OriginTable {
 public:
  void record(const Connection& connection, int remoteRank, int tag) {
    const auto& impl = ConnectionAccess::impl(connection);
    std::lock_guard<std::mutex> lock(mutex_);
    // Forget connections that no longer exist, so the table does not grow with every reconnect.
    for (auto it = origins_.begin(); it != origins_.end();) {
      it = it->second.connection.expired() ? origins_.erase(it) : std::next(it);
    }
    origins_[impl.get()] = ConnectionOrigin{impl, remoteRank, tag};
  }

  ConnectionOrigin find(const Connection& connection) {
    const auto& impl = ConnectionAccess::impl(connection);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = origins_.find(impl.get());
    if (it == origins_.end() || it->second.connection.lock() != impl) {
      throw std::out_of_range("Communicator: the connection was not made by this communicator");
    }
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const BaseConnection*, ConnectionOrigin> origins_;
};

}  // namespace

struct Communicator::Impl {
  std::shared_ptr<Bootstrap> bootstrap;
  std::shared_ptr<Context> context;
  std::shared_ptr<Exchange> exchange;
  std::shared_ptr<OriginTable> origins = std::make_shared<OriginTable>();

  /// A future that, on its first get(), waits for the previous receive on (peer, tag), receives one
  /// message and turns it into a T.
  ///
  /// Two stages, so that the communicator keeps nothing the caller received: the chain that orders
  /// receives on (peer, tag) holds only the received bytes of the latest one (each stage drops its
  /// predecessor once it has waited for it), and the T (a mapped RegisteredMemory, a Connection, a
  /// Semaphore) lives only in the caller's future. Holding the T there would keep a peer's memory
  /// mapped until the next receive on that pair, or until the communicator goes away.
  template <typename T, typename Fn>
  std::shared_future<T> receiveThen(int peer, int tag, Fn fn) {
    MSCCLPP_CHECK_USAGE(peer >= 0 && peer < bootstrap->getNranks(), "Communicator: rank ", peer,
                        " is out of range [0, ", bootstrap->getNranks(), ")");
    std::lock_guard<std::mutex> lock(exchange->mutex);
    std::shared_future<void> previous = exchange->lastReceive[{peer, tag}];
    // The futures are kept in `exchange` (as the next receive's predecessor), so they hold the exchange
    // weakly: a strong reference would be a cycle that keeps every connection alive.
    std::weak_ptr<Exchange> weakExchange = exchange;
    std::shared_future<std::vector<char>> bytes =
        std::async(std::launch::deferred, [weakExchange, previous, peer, tag]() mutable -> std::vector<char> {
          if (previous.valid()) previous.wait();
          previous = {};
          std::shared_ptr<Exchange> alive = weakExchange.lock();
          MSCCLPP_CHECK_USAGE(alive, "Communicator: a receive from rank ", peer, " (tag ", tag,
                              ") was waited on after its communicator was destroyed");
          return alive->receive(peer, tag);
        }).share();
    exchange->lastReceive[{peer, tag}] = std::async(std::launch::deferred, [bytes] { bytes.wait(); }).share();
    return std::async(std::launch::deferred, [bytes, fn = std::move(fn)]() -> T { return fn(bytes.get()); }).share();
  }
};

Communicator::Communicator(std::shared_ptr<Bootstrap> bootstrap, std::shared_ptr<Context> context)
    : pimpl_(std::make_unique<Impl>()) {
  MSCCLPP_CHECK_USAGE(bootstrap, "Communicator: null bootstrap");
  pimpl_->bootstrap = bootstrap;
  pimpl_->context = context ? context : Context::create();
  pimpl_->exchange = std::make_shared<Exchange>();
  pimpl_->exchange->bootstrap = bootstrap;
}

Communicator::~Communicator() = default;

std::shared_ptr<Bootstrap> Communicator::bootstrap() { return pimpl_->bootstrap; }

std::shared_ptr<Context> Communicator::context() { return pimpl_->context; }

RegisteredMemory Communicator::registerMemory(void* ptr, size_t size, TransportFlags transports) {
  return pimpl_->context->registerMemory(ptr, size, transports);
}

void Communicator::sendMemory(RegisteredMemory memory, int remoteRank, int tag) {
  MSCCLPP_CHECK_USAGE(remoteRank >= 0 && remoteRank < pimpl_->bootstrap->getNranks(), "sendMemory: rank ", remoteRank,
                      " is out of range");
  pimpl_->exchange->send(memory.serialize(), remoteRank, tag);
}

std::shared_future<RegisteredMemory> Communicator::recvMemory(int remoteRank, int tag) {
  return pimpl_->receiveThen<RegisteredMemory>(
      remoteRank, tag, [](const std::vector<char>& bytes) { return RegisteredMemory::deserialize(bytes); });
}

std::shared_future<Connection> Communicator::connect(const Endpoint& localEndpoint, int remoteRank, int tag) {
  MSCCLPP_CHECK_USAGE(remoteRank >= 0 && remoteRank < pimpl_->bootstrap->getNranks(), "connect: rank ", remoteRank,
                      " is out of range");
  pimpl_->exchange->send(localEndpoint.serialize(), remoteRank, tag);
  return pimpl_->receiveThen<Connection>(remoteRank, tag,
                                         [context = pimpl_->context, origins = pimpl_->origins, localEndpoint,
                                          remoteRank, tag](const std::vector<char>& bytes) {
                                           Connection connection =
                                               context->connect(localEndpoint, Endpoint::deserialize(bytes));
                                           origins->record(connection, remoteRank, tag);
                                           return connection;
                                         });
}

std::shared_future<Connection> Communicator::connect(const EndpointConfig& localConfig, int remoteRank, int tag) {
  return connect(pimpl_->context->createEndpoint(localConfig), remoteRank, tag);
}

std::shared_future<Semaphore> Communicator::buildSemaphore(const Connection& connection, int remoteRank, int tag) {
  MSCCLPP_CHECK_USAGE(remoteRank >= 0 && remoteRank < pimpl_->bootstrap->getNranks(), "buildSemaphore: rank ",
                      remoteRank, " is out of range");
  SemaphoreStub localStub(connection);
  pimpl_->exchange->send(localStub.serialize(), remoteRank, tag);
  return pimpl_->receiveThen<Semaphore>(remoteRank, tag, [localStub](const std::vector<char>& bytes) {
    return Semaphore(localStub, SemaphoreStub::deserialize(bytes));
  });
}

int Communicator::remoteRankOf(const Connection& connection) { return pimpl_->origins->find(connection).remoteRank; }

int Communicator::tagOf(const Connection& connection) { return pimpl_->origins->find(connection).tag; }

}  // namespace mscclpp
