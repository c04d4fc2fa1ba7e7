// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <atomic>
#include <condition_variable>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/numa.hpp>
#include <mscclpp/proxy.hpp>
#include <mutex>
#include <thread>
#include <utility>

#include "common/checks.hpp"
#include "gpu/gpu_checks.hpp"

namespace mscclpp {
namespace {

// The thread reads the stop flag once per this many empty polls: often enough to stop promptly,
// rarely enough to keep the poll loop tight.
constexpr int kPollsPerStopCheck = 1000;

std::function<void()> defaultThreadInit() {
  int deviceId = 0;
  MSCCLPP_CUDATHROW(cudaGetDevice(&deviceId));
  return [deviceId] {
    MSCCLPP_CUDATHROW(cudaSetDevice(deviceId));
    int node = -1;
    try {
      node = getDeviceNumaNode(deviceId);
    } catch (const BaseError& e) {
      LOG_INFO(PROXY, "proxy for GPU ", deviceId, " not NUMA-bound: ", e.what());
    }
    numaBind(node);
  };
}

}  // namespace

struct Proxy::Impl {
  ProxyHandler handler;
  std::function<void()> threadInit;
  std::shared_ptr<Fifo> fifo;
  std::thread thread;
  std::atomic<bool> running{false};

  std::mutex mutex;
  std::condition_variable initDone;
  bool initialized = false;
  // The init's error, kept apart from the handlers': start(true) reports it.
  std::exception_ptr initError;
  std::exception_ptr firstError;

  void keepError(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!firstError) firstError = error;
  }

  void serveFromThread() {
    std::exception_ptr failed;
    try {
      AvoidCudaGraphCaptureGuard captureGuard;
      threadInit();
    } catch (...) {
      LOG_ERROR(PROXY, "proxy thread init failed; the proxy does not serve");
      failed = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      initialized = true;
      initError = failed;
      if (failed) running = false;
    }
    initDone.notify_all();
    // A thread whose init failed may be on the wrong GPU or NUMA node: it serves nothing.
    if (failed) return;

    // Requests already in the FIFO are served before a stop takes effect: the flag is read only when
    // the FIFO is empty.
    int idle = 0;
    for (;;) {
      ProxyTrigger trigger = fifo->poll();
      if (trigger.fst == 0 || trigger.snd == 0) {
        if (++idle == kPollsPerStopCheck) {
          idle = 0;
          if (!running.load(std::memory_order_acquire)) break;
        }
        continue;
      }
      idle = 0;
      trigger.snd &= ~detail::TriggerValidBitMask;
      ProxyHandlerResult result = ProxyHandlerResult::Continue;
      try {
        result = handler(trigger);
      } catch (const std::exception& e) {
        LOG_ERROR(PROXY, "proxy handler failed: ", e.what());
        keepError(std::current_exception());
      }
      fifo->pop();
      if (result == ProxyHandlerResult::Stop) break;
    }
    running = false;
  }
};

Proxy::Proxy(ProxyHandler handler, std::function<void()> threadInit, int fifoSize) : pimpl_(std::make_unique<Impl>()) {
  MSCCLPP_CHECK_USAGE(handler, "Proxy: empty handler");
  pimpl_->handler = std::move(handler);
  pimpl_->threadInit = threadInit ? std::move(threadInit) : [] {};
  pimpl_->fifo = std::make_shared<Fifo>(fifoSize);
}

Proxy::Proxy(ProxyHandler handler, int fifoSize) : Proxy(std::move(handler), defaultThreadInit(), fifoSize) {}

Proxy::~Proxy() {
  pimpl_->running = false;
  if (pimpl_->thread.joinable()) pimpl_->thread.join();
}

void Proxy::start(bool blocking) {
  MSCCLPP_CHECK_USAGE(!pimpl_->thread.joinable(), "Proxy::start: already started");
  pimpl_->running = true;
  pimpl_->initialized = false;
  pimpl_->thread = std::thread([impl = pimpl_.get()] { impl->serveFromThread(); });
  if (!blocking) return;
  std::exception_ptr initError;
  {
    std::unique_lock<std::mutex> lock(pimpl_->mutex);
    pimpl_->initDone.wait(lock, [&] { return pimpl_->initialized; });
    initError = std::exchange(pimpl_->initError, nullptr);
  }
  if (initError) {
    pimpl_->thread.join();
    std::rethrow_exception(initError);
  }
}

void Proxy::stop() {
  pimpl_->running = false;
  if (pimpl_->thread.joinable()) pimpl_->thread.join();
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(pimpl_->mutex);
    error = std::exchange(pimpl_->initError, nullptr);
    if (!error) error = std::exchange(pimpl_->firstError, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

std::shared_ptr<Fifo> Proxy::fifo() { return pimpl_->fifo; }

}  // namespace mscclpp
