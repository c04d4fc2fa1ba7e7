// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "gpu/stream_value_writer.hpp"

#include <mscclpp/gpu_utils.hpp>

#include "common/logger.hpp"
#include "gpu/driver_api.hpp"

namespace mscclpp {

void StreamValueWriter::write(cudaStream_t stream, uint64_t* dst, uint64_t value, uint64_t* staging) {
  *staging = value;
  if (streamWritesWork_.load(std::memory_order_relaxed)) {
    CUresult result = cu::cuStreamWriteValue64(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(dst),
                                               value, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (result == CUDA_SUCCESS) return;
    if (streamWritesWork_.exchange(false)) {
      LOG_INFO(GPU, owner_, ": stream memory writes unavailable (", cuResultName(result),
               "); token updates are host-to-device copies");
    }
  }
  // Pageable source: the copy is staged before cudaMemcpyAsync returns.
  MSCCLPP_CUDATHROW(cudaMemcpyAsync(dst, staging, sizeof(uint64_t), cudaMemcpyHostToDevice, stream));
}

}  // namespace mscclpp
