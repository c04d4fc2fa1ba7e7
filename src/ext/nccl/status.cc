// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/nccl/status.hpp"

#include <mscclpp/errors.hpp>
#include <mutex>
#include <new>

#include "ext/common/messages.hpp"
#include "ext/nccl/comm.hpp"

namespace mscclpp::nccl {

namespace {

std::mutex lastErrorMutex;
std::string processLastError;

ncclResult_t resultOfCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::SystemError:
      return ncclSystemError;
    case ErrorCode::InternalError:
      return ncclInternalError;
    case ErrorCode::RemoteError:
      return ncclRemoteError;
    case ErrorCode::InvalidUsage:
      return ncclInvalidUsage;
    // NCCL 2.28.3 has no timeout code: a peer that did not answer in time is a remote failure.
    case ErrorCode::Timeout:
      return ncclRemoteError;
    case ErrorCode::Aborted:
      return ncclRemoteError;
    case ErrorCode::ExecutorError:
      return ncclInternalError;
  }
  return ncclInternalError;
}

}  // namespace

ncclResult_t resultOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return resultOfCode(e.getErrorCode());
  } catch (const SysError&) {
    return ncclSystemError;
  } catch (const CudaError&) {
    return ncclUnhandledCudaError;
  } catch (const CuError&) {
    return ncclUnhandledCudaError;
  } catch (const IbError&) {
    return ncclSystemError;
  } catch (const std::bad_alloc&) {
    return ncclSystemError;
  } catch (...) {
    return ncclInternalError;
  }
}

std::string messageOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

ncclResult_t fail(ncclComm_t comm, const char* call, ncclResult_t code, const std::string& message) {
  std::string text = ext::messageFrom(call, message);
  LOG_WARN(NCCL, text, " (", resultName(code), ")");
  if (validComm(comm)) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    comm->lastError = text;
  }
  std::lock_guard<std::mutex> lock(lastErrorMutex);
  processLastError = std::move(text);
  return code;
}

std::string lastError(ncclComm_t comm) {
  if (comm != nullptr) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    if (!comm->lastError.empty()) return comm->lastError;
  }
  std::lock_guard<std::mutex> lock(lastErrorMutex);
  return processLastError;
}

const char* resultName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the libmscclpp developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    case ncclNumResults:
      break;
  }
  return "unknown result code";
}

}  // namespace mscclpp::nccl
