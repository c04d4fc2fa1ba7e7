// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_CONNECTION_HPP_
#define MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_CONNECTION_HPP_

#include <atomic>
#include <mscclpp/gpu.hpp>

#include "gpu/stream_value_writer.hpp"
#include "transport/connection.hpp"

namespace mscclpp {

/// Copies with the copy engines on a stream of the Context (one per GPU, non-blocking); the peer's
/// memory is already mapped here, so a write is one cudaMemcpyAsync.
class CudaIpcConnection : public BaseConnection {
 public:
  CudaIpcConnection(std::shared_ptr<Context> context, const Endpoint& local, const Endpoint& remote);

 protected:
  void writeFromUser(const RegisteredMemory& dst, uint64_t dstOffset, const RegisteredMemory& src, uint64_t srcOffset,
                     uint64_t size) override;
  void updateAndSyncFromUser(const RegisteredMemory& dst, uint64_t dstOffset, uint64_t* src,
                             uint64_t newValue) override;
  void flushFromUser(int64_t timeoutUsec) override;

 private:
  cudaStream_t stream_;
  std::atomic<bool> dirty_{false};
  StreamValueWriter valueWriter_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_CONNECTION_HPP_
