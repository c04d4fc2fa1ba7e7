// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <atomic>
#include <mscclpp/port_channel.hpp>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/checks.hpp"
#include "common/logger.hpp"
#include "transport/access.hpp"

namespace mscclpp {
namespace {

// The widths of the request's id fields bound how many can be named.
constexpr uint32_t kMaxSemaphores = 1u << TriggerBitsSemaphoreId;
constexpr uint32_t kMaxMemories = 1u << TriggerBitsMemoryId;

}  // namespace

struct ProxyService::Impl {
  // Slots are written once, before their id is published with a release increment of the count, and
  // never move: the proxy thread reads them without a lock while others are being added.
  std::vector<std::shared_ptr<Host2DeviceSemaphore>> semaphores =
      std::vector<std::shared_ptr<Host2DeviceSemaphore>>(kMaxSemaphores);
  std::vector<RegisteredMemory> memories = std::vector<RegisteredMemory>(kMaxMemories);
  std::atomic<uint32_t> numSemaphores{0};
  std::atomic<uint32_t> numMemories{0};
  std::mutex addMutex;
  std::shared_ptr<Proxy> proxy;

  // The first error a request raised, until the next call on the service rethrows it.
  std::mutex errorMutex;
  std::exception_ptr latchedError;

  void latch(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!latchedError) latchedError = error;
  }

  void throwIfLatched() {
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(errorMutex);
      error = std::exchange(latchedError, nullptr);
    }
    if (error) std::rethrow_exception(error);
  }

  // The proxy keeps serving after a failed request; the user learns of it at the next call.
  ProxyHandlerResult handleOrLatch(ProxyTrigger trigger) {
    try {
      return handleFromProxy(trigger);
    } catch (const std::exception& e) {
      LOG_ERROR(PROXY, "ProxyService: a request failed: ", e.what());
      latch(std::current_exception());
    }
    return ProxyHandlerResult::Continue;
  }

  // Proxy thread only: requests written or signaled on each connection since its last flush.
  std::unordered_map<const BaseConnection*, int> inFlight;

  ProxyHandlerResult handleFromProxy(ProxyTrigger trigger) {
    const uint32_t semaphoreId = static_cast<uint32_t>(trigger.fields.semaphoreId);
    MSCCLPP_CHECK_USAGE(semaphoreId < numSemaphores.load(std::memory_order_acquire),
                        "ProxyService: a request names "
                        "semaphore ",
                        semaphoreId, " but only ", numSemaphores.load(), " exist");
    Host2DeviceSemaphore& semaphore = *semaphores[semaphoreId];
    Connection& connection = semaphore.connection();
    int& count = inFlight[ConnectionAccess::impl(connection).get()];
    if (trigger.fields.type & TriggerData) {
      const uint32_t dst = static_cast<uint32_t>(trigger.fields.dstMemoryId);
      const uint32_t src = static_cast<uint32_t>(trigger.fields.srcMemoryId);
      const uint32_t known = numMemories.load(std::memory_order_acquire);
      MSCCLPP_CHECK_USAGE(dst < known && src < known, "ProxyService: a request names memories ", dst, " and ", src,
                          " but only ", known, " exist");
      connection.write(memories[dst], trigger.fields.dstOffset, memories[src], trigger.fields.srcOffset,
                       trigger.fields.size);
      ++count;
    }
    if (trigger.fields.type & TriggerFlag) {
      semaphore.signal();
      ++count;
    }
    const int maxQueue = connection.getMaxWriteQueueSize();
    if (((trigger.fields.type & TriggerSync) && count > 0) || (maxQueue > 0 && count >= maxQueue)) {
      connection.flush();
      count = 0;
    }
    return ProxyHandlerResult::Continue;
  }
};

ProxyService::ProxyService(int fifoSize) : pimpl_(std::make_unique<Impl>()) {
  Impl* impl = pimpl_.get();
  pimpl_->proxy =
      std::make_shared<Proxy>([impl](ProxyTrigger trigger) { return impl->handleOrLatch(trigger); }, fifoSize);
}

ProxyService::~ProxyService() {
  // Stop before the tables the handler reads go away.
  pimpl_->proxy.reset();
}

SemaphoreId ProxyService::buildAndAddSemaphore(Communicator& communicator, const Connection& connection) {
  pimpl_->throwIfLatched();
  return addSemaphore(std::make_shared<Host2DeviceSemaphore>(communicator, connection));
}

SemaphoreId ProxyService::addSemaphore(const Semaphore& semaphore) {
  pimpl_->throwIfLatched();
  return addSemaphore(std::make_shared<Host2DeviceSemaphore>(semaphore));
}

SemaphoreId ProxyService::addSemaphore(std::shared_ptr<Host2DeviceSemaphore> semaphore) {
  pimpl_->throwIfLatched();
  MSCCLPP_CHECK_USAGE(semaphore, "ProxyService::addSemaphore: null semaphore");
  std::lock_guard<std::mutex> lock(pimpl_->addMutex);
  uint32_t id = pimpl_->numSemaphores.load(std::memory_order_relaxed);
  MSCCLPP_CHECK_USAGE(id < kMaxSemaphores, "ProxyService: at most ", kMaxSemaphores, " semaphores");
  pimpl_->semaphores[id] = std::move(semaphore);
  pimpl_->numSemaphores.store(id + 1, std::memory_order_release);
  return id;
}

MemoryId ProxyService::addMemory(RegisteredMemory memory) {
  pimpl_->throwIfLatched();
  std::lock_guard<std::mutex> lock(pimpl_->addMutex);
  uint32_t id = pimpl_->numMemories.load(std::memory_order_relaxed);
  MSCCLPP_CHECK_USAGE(id < kMaxMemories, "ProxyService: at most ", kMaxMemories, " memories");
  pimpl_->memories[id] = std::move(memory);
  pimpl_->numMemories.store(id + 1, std::memory_order_release);
  return id;
}

MemoryId ProxyService::nextMemoryId(uint32_t count) const {
  pimpl_->throwIfLatched();
  MSCCLPP_CHECK_USAGE(count > 0, "ProxyService::nextMemoryId: count must be positive");
  return pimpl_->numMemories.load(std::memory_order_acquire);
}

std::shared_ptr<Host2DeviceSemaphore> ProxyService::semaphore(SemaphoreId id) const {
  pimpl_->throwIfLatched();
  MSCCLPP_CHECK_USAGE(id < pimpl_->numSemaphores.load(std::memory_order_acquire), "ProxyService: no semaphore ", id);
  return pimpl_->semaphores[id];
}

BasePortChannel ProxyService::basePortChannel(SemaphoreId id) {
  pimpl_->throwIfLatched();
  return BasePortChannel(id, semaphore(id), pimpl_->proxy);
}

PortChannel ProxyService::portChannel(SemaphoreId id, MemoryId dst, MemoryId src) {
  pimpl_->throwIfLatched();
  const uint32_t known = pimpl_->numMemories.load(std::memory_order_acquire);
  MSCCLPP_CHECK_USAGE(dst < known && src < known, "ProxyService::portChannel: memories ", dst, " and ", src,
                      " must have been added (", known, " so far)");
  return PortChannel(id, semaphore(id), pimpl_->proxy, dst, src);
}

void ProxyService::startProxy(bool blocking) {
  pimpl_->throwIfLatched();
  pimpl_->proxy->start(blocking);
}

void ProxyService::stopProxy() {
  pimpl_->proxy->stop();
  pimpl_->throwIfLatched();
}

}  // namespace mscclpp
