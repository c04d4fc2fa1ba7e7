// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_ERRORS_HPP_
#define MSCCLPP_ERRORS_HPP_

#include <stdexcept>
#include <string>

namespace mscclpp {

/// The one list of library error codes; the enum and its names are both generated from it, so a code
/// can never be added without a name.
#define MSCCLPP_FOR_EACH_ERROR_CODE(X) \
  X(SystemError)                       \
  X(InternalError)                     \
  X(RemoteError)                       \
  X(InvalidUsage)                      \
  X(Timeout)                           \
  X(Aborted)                           \
  X(ExecutorError)

/// What went wrong, in categories a caller can act on:
/// SystemError (an OS or network call failed), InternalError (a library invariant broke),
/// RemoteError (a peer reported a failure), InvalidUsage (bad arguments or call order, bad bytes to
/// deserialize), Timeout (a deadline passed), Aborted (the operation was cancelled or a peer vanished),
/// ExecutorError (an execution plan could not be run).
enum class ErrorCode {
#define MSCCLPP_ERROR_CODE_ENUMERATOR(name) name,
  MSCCLPP_FOR_EACH_ERROR_CODE(MSCCLPP_ERROR_CODE_ENUMERATOR)
#undef MSCCLPP_ERROR_CODE_ENUMERATOR
};

/// The name of an error code, e.g. "InvalidUsage".
std::string errorToString(enum ErrorCode error);

/// Base of every exception the library throws. `what()` is the message with the decoded error appended.
class BaseError : public std::runtime_error {
 public:
  BaseError(const std::string& message, int errorCode);
  explicit BaseError(int errorCode);
  virtual ~BaseError() = default;
  int getErrorCode() const;
  const char* what() const noexcept override;

 protected:
  std::string message_;
  int errorCode_;
};

/// A library error. `what()` is "<message> (mscclpp failure: <ErrorCode name>)".
class Error : public BaseError {
 public:
  Error(const std::string& message, ErrorCode errorCode);
  virtual ~Error() = default;
  ErrorCode getErrorCode() const;
};

/// An OS call failed; the code is the errno. `what()` ends with "(System failure: <strerror>)".
class SysError : public BaseError {
 public:
  SysError(const std::string& message, int errorCode);
  virtual ~SysError() = default;
};

/// A CUDA runtime call failed; the code is the cudaError_t. `what()` ends with
/// "(Cuda failure: <error string>)".
class CudaError : public BaseError {
 public:
  CudaError(const std::string& message, int errorCode);
  virtual ~CudaError() = default;
};

/// A CUDA driver call failed; the code is the CUresult. `what()` ends with "(Cu failure: <error string>)".
class CuError : public BaseError {
 public:
  CuError(const std::string& message, int errorCode);
  virtual ~CuError() = default;
};

/// An ibverbs call failed; the code is the errno or work-completion status. `what()` ends with
/// "(Ib failure: <description>)".
class IbError : public BaseError {
 public:
  IbError(const std::string& message, int errorCode);
  virtual ~IbError() = default;
};

}  // namespace mscclpp

#endif  // MSCCLPP_ERRORS_HPP_
