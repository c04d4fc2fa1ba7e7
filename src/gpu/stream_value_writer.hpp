// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_GPU_STREAM_VALUE_WRITER_HPP_
#define MSCCLPP_GPU_STREAM_VALUE_WRITER_HPP_

#include <atomic>
#include <cstdint>
#include <mscclpp/gpu.hpp>
#include <string>

namespace mscclpp {

/// Enqueues 8-byte stores of semaphore tokens into GPU memory on a stream. A stream write
/// (cuStreamWriteValue64 with default flags) carries the value in the command itself, needs no
/// staging memory and is ordered after everything issued before it on the stream (the data the token
/// announces). Where the driver refuses stream writes, the writer says so once in the log and from
/// then on stages the value through a host-to-device copy on the same stream. Thread-safe.
class StreamValueWriter {
 public:
  /// `owner` names the user in the log line (e.g. the connection).
  explicit StreamValueWriter(std::string owner) : owner_(std::move(owner)) {}

  /// Stores `value` to the device word `dst` on `stream`, on the current device. `*staging` is
  /// pageable host memory the copy fallback reads from: it is set to `value`, and the caller may
  /// change it as soon as this returns.
  void write(cudaStream_t stream, uint64_t* dst, uint64_t value, uint64_t* staging);

 private:
  const std::string owner_;
  std::atomic<bool> streamWritesWork_{true};
};

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_STREAM_VALUE_WRITER_HPP_
