// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ETHERNET_GPU_DELIVERY_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_GPU_DELIVERY_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <mscclpp/gpu.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <vector>

#include "gpu/cuda_event.hpp"
#include "gpu/stream_value_writer.hpp"

namespace mscclpp {

class StagingBuffer;

/// How an Ethernet receiver puts what it reads from the socket into GPU memory without waiting for
/// the GPU: payload pieces land in pinned staging and go on with asynchronous host-to-device copies
/// on a stream of its own; token updates follow on the same stream as stream writes, so a GPU waiter
/// that sees a token also sees every write received before it. The staging buffer is used as two
/// halves that alternate, so reading the next piece from the socket overlaps the copy of the previous
/// one. Only the receiver thread calls it.
///
/// On an H200 this took the Ethernet port-channel round trip from 100-106 us, with a synchronous copy
/// per message, to 68-78 us (docs/performance.md).
class GpuDelivery {
 public:
  /// Reads up to `bytes` payload bytes into `buffer`, all of them.
  using Receive = std::function<void(char* buffer, size_t bytes)>;

  explicit GpuDelivery(StagingBuffer& staging);
  /// Waits for copies still reading the staging buffer.
  ~GpuDelivery();
  GpuDelivery(const GpuDelivery&) = delete;
  GpuDelivery& operator=(const GpuDelivery&) = delete;

  /// Receives `bytes` through `receive` and copies them to `dst`, memory of GPU `deviceId`.
  void write(int deviceId, char* dst, uint64_t bytes, const Receive& receive);
  /// Stores `value` to the 8-byte word `dst` of GPU `deviceId` after every earlier write.
  void update(int deviceId, uint64_t* dst, uint64_t value);
  /// Waits until every write and update issued so far is in GPU memory.
  void drain();
  /// Whether every write and update issued so far is in GPU memory, without waiting.
  bool done();

 private:
  static constexpr int kHalves = 2;
  /// Makes the stream and events those of GPU `deviceId` (after draining the previous GPU's).
  void use(int deviceId);
  /// Drains, then frees the stream and events. Cleanup: errors are logged.
  void release() noexcept;

  StagingBuffer& staging_;
  int deviceId_ = -1;
  std::unique_ptr<CudaStreamWithFlags> stream_;
  std::vector<CudaEvent> copied_;  // one per half, recorded after the copy out of it; made with stream_
  int nextHalf_ = 0;
  bool pending_ = false;  // work issued since the last drain
  StreamValueWriter valueWriter_{"Ethernet receiver"};
  uint64_t valueStaging_ = 0;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ETHERNET_GPU_DELIVERY_HPP_
