// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_THREAD_BOOTSTRAP_HPP_
#define MSCCLPP_TEST_THREAD_BOOTSTRAP_HPP_

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mscclpp/core.hpp>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

namespace mscclpp::test {

/// Ranks that are threads of one process, exchanging messages through shared queues: a user-written
/// Bootstrap (it overrides only the seven virtuals), used to test what is built on a Bootstrap without
/// starting processes.
class ThreadBootstrap : public Bootstrap {
 public:
  struct Group {
    std::mutex mutex;
    std::condition_variable cv;
    // (from, to, tag) -> messages in send order; collective operations use their own key space.
    std::map<std::tuple<int, int, int, bool>, std::deque<std::vector<char>>> queues;
  };

  ThreadBootstrap(int rank, int nRanks, std::shared_ptr<Group> group) : rank_(rank), nRanks_(nRanks), group_(group) {}

  int getRank() const override { return rank_; }
  int getNranks() const override { return nRanks_; }
  int getNranksPerNode() const override { return nRanks_; }
  void send(void* data, int size, int peer, int tag) override { push(peer, tag, false, data, size); }
  void recv(void* data, int size, int peer, int tag) override { pop(peer, tag, false, data, size); }
  void allGather(void* allData, int size) override {
    char* all = static_cast<char*>(allData);
    for (int peer = 0; peer < nRanks_; ++peer)
      if (peer != rank_) push(peer, 0, true, all + rank_ * size, size);
    for (int peer = 0; peer < nRanks_; ++peer)
      if (peer != rank_) pop(peer, 0, true, all + peer * size, size);
  }
  void barrier() override {
    std::vector<char> all(nRanks_);
    allGather(all.data(), 1);
  }
  using Bootstrap::recv;
  using Bootstrap::send;

  /// Runs `body(bootstrap)` on nRanks threads and rethrows the first exception any of them threw.
  static void run(int nRanks, const std::function<void(std::shared_ptr<ThreadBootstrap>)>& body) {
    auto group = std::make_shared<Group>();
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(nRanks);
    for (int r = 0; r < nRanks; ++r) {
      threads.emplace_back([&, r] {
        try {
          body(std::make_shared<ThreadBootstrap>(r, nRanks, group));
        } catch (...) {
          errors[r] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  void push(int peer, int tag, bool collective, const void* data, int size) {
    std::lock_guard<std::mutex> lock(group_->mutex);
    const char* bytes = static_cast<const char*>(data);
    group_->queues[{rank_, peer, tag, collective}].emplace_back(bytes, bytes + size);
    group_->cv.notify_all();
  }
  void pop(int peer, int tag, bool collective, void* data, int size) {
    std::unique_lock<std::mutex> lock(group_->mutex);
    auto& queue = group_->queues[{peer, rank_, tag, collective}];
    if (!group_->cv.wait_for(lock, std::chrono::seconds(30), [&] { return !queue.empty(); })) {
      throw Error(
          "ThreadBootstrap: rank " + std::to_string(rank_) + " timed out receiving from " + std::to_string(peer),
          ErrorCode::Timeout);
    }
    std::vector<char> message = std::move(queue.front());
    queue.pop_front();
    if (static_cast<int>(message.size()) != size) {
      throw Error("ThreadBootstrap: size mismatch", ErrorCode::InvalidUsage);
    }
    std::memcpy(data, message.data(), size);
  }

  int rank_;
  int nRanks_;
  std::shared_ptr<Group> group_;
};

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_THREAD_BOOTSTRAP_HPP_
