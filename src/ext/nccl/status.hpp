// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// How the C API reports failures. Inside the library errors are exceptions (mscclpp::Error and its
// kin); each entry point runs its body through apiCall, which turns an exception into an
// ncclResult_t, logs it and records the message for ncclGetLastError. Checks of the caller's
// arguments happen at the entry point and fail with the NCCL code the caller expects
// (ncclInvalidArgument or ncclInvalidUsage) through the same recording path.

#ifndef MSCCLPP_EXT_NCCL_STATUS_HPP_
#define MSCCLPP_EXT_NCCL_STATUS_HPP_

#include <mscclpp/nccl.h>

#include <exception>
#include <string>

#include "common/logger.hpp"
#include "common/strings.hpp"

namespace mscclpp::nccl {

/// The NCCL code of an exception thrown inside the library.
ncclResult_t resultOf(const std::exception_ptr& error);

/// The message of an exception thrown inside the library.
std::string messageOf(const std::exception_ptr& error);

/// Records `message` as the last error (process-wide, and on `comm` when it is a communicator), logs
/// it with the name of the failing API function `call` and returns `code`.
ncclResult_t fail(ncclComm_t comm, const char* call, ncclResult_t code, const std::string& message);

/// The message ncclGetLastError returns for `comm` (null: the process-wide one).
std::string lastError(ncclComm_t comm);

/// The name ncclGetErrorString gives a code.
const char* resultName(ncclResult_t result);

/// Runs `body` (which returns ncclResult_t) and converts whatever it throws.
template <class Body>
ncclResult_t apiCall(ncclComm_t comm, const char* call, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    return fail(comm, call, resultOf(error), messageOf(error));
  }
}

}  // namespace mscclpp::nccl

/// Fails the API function `call` ("ncclAllReduce": the name callers know, which ncclGetLastError
/// shows) with `code` and the streamed message unless `cond` holds; returns from the enclosing
/// function.
#define NCCL_REQUIRE(call, cond, comm, code, ...)                                     \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      return ::mscclpp::nccl::fail(comm, call, code, ::mscclpp::concat(__VA_ARGS__)); \
    }                                                                                 \
  } while (0)

#endif  // MSCCLPP_EXT_NCCL_STATUS_HPP_
