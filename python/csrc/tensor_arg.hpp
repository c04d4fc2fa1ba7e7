// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Arguments of the collectives' Python calls: a GPU tensor of any framework that speaks DLPack (torch,
// cupy, ...) read through `__dlpack_device__` and `__dlpack__`, and a CUDA stream given as a framework's
// stream object, a raw handle, or None for the current stream of the tensor's framework.

#ifndef MSCCLPP_PYTHON_TENSOR_ARG_HPP_
#define MSCCLPP_PYTHON_TENSOR_ARG_HPP_

#include <mscclpp/collectives.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

/// What a collective needs of a tensor: where its elements start, how many there are, and their type.
struct TensorArg {
  void* data;
  size_t count;
  collectives::DataType type;
};

/// The CUDA stream to enqueue on, and what to tell a tensor's producer about it (__dlpack__'s `stream`).
struct StreamArg {
  cudaStream_t handle;
  int64_t dlpackStream;
};

/// `stream` is an int (a cudaStream_t), an object with `cuda_stream` (torch.cuda.Stream) or `ptr`
/// (cupy.cuda.Stream), or None for the current stream of the framework that made `tensor` (torch or
/// cupy; the legacy default stream for any other producer).
StreamArg streamArg(const py::handle& stream, const py::handle& tensor);

/// Reads `tensor` through DLPack, telling its producer which stream will use it (so a producer whose
/// current stream differs orders the two, as the protocol says; nothing to order for its own current
/// stream). Error(InvalidUsage), naming `what`, for a tensor that is not on this thread's current GPU,
/// not contiguous, or of a type collectives lack.
TensorArg tensorArg(const py::handle& tensor, const StreamArg& stream, const char* what);

}  // namespace mscclpp::python

#endif  // MSCCLPP_PYTHON_TENSOR_ARG_HPP_
