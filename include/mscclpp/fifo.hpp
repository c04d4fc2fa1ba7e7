// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_FIFO_HPP_
#define MSCCLPP_FIFO_HPP_

#include <memory>

#include "fifo_device.hpp"

namespace mscclpp {

constexpr size_t DEFAULT_FIFO_SIZE = 512;

/// The host side of the FIFO through which GPU threads send requests to a proxy thread
/// (fifo_device.hpp describes the protocol). Slots and the tail live in mapped pinned host memory,
/// the head and the device's tail cache in device memory of the current GPU at construction.
/// poll() and pop() belong to one consumer thread.
class Fifo {
 public:
  /// `size` slots; throws Error(InvalidUsage) if size < 1.
  Fifo(int size = DEFAULT_FIFO_SIZE);
  ~Fifo();
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;

  /// The request at the tail. Ready when both fst and snd are non-zero; otherwise returned as is
  /// (fst or snd zero) and the caller polls again.
  ProxyTrigger poll();

  /// Frees the slot at the tail and advances it (release order: a waiting pusher may reuse the slot).
  void pop();

  int size() const;

  FifoDeviceHandle deviceHandle() const;

  /// Kept for source compatibility: the tail is always visible to the device.
  [[deprecated("The tail is always visible to the device; nothing to flush.")]] void flushTail(
      [[maybe_unused]] bool sync = false) {}

 private:
  struct Impl;
  std::unique_ptr<Impl> pimpl_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_FIFO_HPP_
