// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/atomic_device.hpp>
#include <mscclpp/fifo.hpp>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"

namespace mscclpp {

struct Fifo::Impl {
  int size;
  detail::UniqueGpuHostPtr<ProxyTrigger> triggers;
  detail::UniqueGpuHostPtr<uint64_t> tail;
  detail::UniqueGpuPtr<uint64_t> head;
  detail::UniqueGpuPtr<uint64_t> tailCache;
  ProxyTrigger* triggersOnDevice = nullptr;
  uint64_t* tailOnDevice = nullptr;
  // The consumer's own count of pops; the shared tail is only written.
  uint64_t hostTail = 0;
};

Fifo::Fifo(int size) : pimpl_(std::make_unique<Impl>()) {
  MSCCLPP_CHECK_USAGE(size >= 1, "Fifo: size must be at least 1, got ", size);
  pimpl_->size = size;
  pimpl_->triggers = detail::gpuCallocHostUnique<ProxyTrigger>(size, cudaHostAllocMapped);
  pimpl_->tail = detail::gpuCallocHostUnique<uint64_t>(1, cudaHostAllocMapped);
  pimpl_->head = detail::gpuCallocUnique<uint64_t>(1);
  pimpl_->tailCache = detail::gpuCallocUnique<uint64_t>(1);
  MSCCLPP_CUDATHROW(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&pimpl_->triggersOnDevice), pimpl_->triggers.get(), 0));
  MSCCLPP_CUDATHROW(cudaHostGetDevicePointer(reinterpret_cast<void**>(&pimpl_->tailOnDevice), pimpl_->tail.get(), 0));
}

Fifo::~Fifo() = default;

ProxyTrigger Fifo::poll() {
  ProxyTrigger trigger;
  ProxyTrigger* slot = &pimpl_->triggers.get()[pimpl_->hostTail % pimpl_->size];
  // The device publishes the slot with a release store of both words, but a 16-byte store is not
  // single-copy atomic: the words may become visible one at a time, in either order. pop() zeroes both,
  // so a slot whose words are both non-zero holds the new request whole; the caller polls again
  // otherwise.
  trigger.fst = atomicLoad(&slot->fst, memoryOrderAcquire);
  trigger.snd = atomicLoad(&slot->snd, memoryOrderAcquire);
  return trigger;
}

void Fifo::pop() {
  ProxyTrigger* slot = &pimpl_->triggers.get()[pimpl_->hostTail % pimpl_->size];
  // Both words: a push into this slot, a lap later, may show either word first (see poll()).
  atomicStore<uint64_t>(&slot->fst, 0, memoryOrderRelaxed);
  atomicStore<uint64_t>(&slot->snd, 0, memoryOrderRelaxed);
  ++pimpl_->hostTail;
  atomicStore(pimpl_->tail.get(), pimpl_->hostTail, memoryOrderRelease);
}

int Fifo::size() const { return pimpl_->size; }

FifoDeviceHandle Fifo::deviceHandle() const {
  FifoDeviceHandle handle;
  handle.triggers = pimpl_->triggersOnDevice;
  handle.head = pimpl_->head.get();
  handle.tail = pimpl_->tailOnDevice;
  handle.tailCache = pimpl_->tailCache.get();
  handle.size = pimpl_->size;
  return handle;
}

}  // namespace mscclpp
