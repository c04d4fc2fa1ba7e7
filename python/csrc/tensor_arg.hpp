// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Arguments of the collectives' Python calls: a GPU tensor of any framework that speaks DLPack (torch and
// cupy read directly, others through `__dlpack_device__` and `__dlpack__`), and a CUDA stream given as a
// framework's stream object, a raw handle, or None for the current stream of the tensor's framework.

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

/// The frameworks whose tensors are read directly (their own attributes, a few C calls each) rather than
/// through DLPack, whose `__dlpack__` costs tens of microseconds per call in torch.
enum class Framework { Torch, Cupy, Other };

/// The CUDA stream to enqueue on. `current` names the framework whose current stream it is (the caller
/// passed None), Other when the caller named the stream: a tensor of another framework has its producer's
/// current stream ordered before `handle`, as DLPack's `stream` argument asks of a producer. `ordered`
/// names the framework whose current stream one call's earlier tensor already ordered (or found equal),
/// so that the second tensor of a call costs no second lookup (about 1.5 us in cupy).
struct StreamArg {
  cudaStream_t handle;
  Framework current;
  Framework ordered = Framework::Other;
};

/// `stream` is an int (a cudaStream_t), an object with `cuda_stream` (torch.cuda.Stream) or `ptr`
/// (cupy.cuda.Stream), or None for the current stream of the framework that made `tensor` (torch or
/// cupy; the legacy default stream for any other producer).
StreamArg streamArg(const py::handle& stream, const py::handle& tensor);

/// Reads `tensor`: a torch tensor or cupy array on this thread's current GPU, contiguous and of a type
/// collectives have, directly; anything else through DLPack (`__dlpack_device__`, `__dlpack__`), which
/// also says what is wrong. Either way, work its framework has queued on its current stream comes before
/// `stream` when the two differ (an event recorded on the one and waited for on the other, as torch and
/// cupy do for `__dlpack__(stream=...)`). Error(InvalidUsage), naming `what`, for a tensor that is not on
/// this thread's current GPU, not contiguous, or of a type collectives lack.
TensorArg tensorArg(const py::handle& tensor, StreamArg& stream, const char* what);

}  // namespace mscclpp::python

#endif  // MSCCLPP_PYTHON_TENSOR_ARG_HPP_
