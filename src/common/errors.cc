// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <cstring>
#include <mscclpp/errors.hpp>

namespace mscclpp {

std::string errorToString(enum ErrorCode error) {
  // Generated from the same list as the enum, and without a default case: -Werror=switch makes a
  // code without a name a build error.
  switch (error) {
#define MSCCLPP_ERROR_CODE_CASE(name) \
  case ErrorCode::name:               \
    return #name;
    MSCCLPP_FOR_EACH_ERROR_CODE(MSCCLPP_ERROR_CODE_CASE)
#undef MSCCLPP_ERROR_CODE_CASE
  }
  return "ErrorCode(" + std::to_string(static_cast<int>(error)) + ")";
}

BaseError::BaseError(const std::string& message, int errorCode)
    : std::runtime_error(""), message_(message), errorCode_(errorCode) {}

BaseError::BaseError(int errorCode) : std::runtime_error(""), errorCode_(errorCode) {}

int BaseError::getErrorCode() const { return errorCode_; }

const char* BaseError::what() const noexcept { return message_.c_str(); }

Error::Error(const std::string& message, ErrorCode errorCode) : BaseError(static_cast<int>(errorCode)) {
  message_ = message + " (mscclpp failure: " + errorToString(errorCode) + ")";
}

ErrorCode Error::getErrorCode() const { return static_cast<ErrorCode>(errorCode_); }

SysError::SysError(const std::string& message, int errorCode) : BaseError(errorCode) {
  message_ = message + " (System failure: " + std::strerror(errorCode) + ")";
}

IbError::IbError(const std::string& message, int errorCode) : BaseError(errorCode) {
  message_ = message + " (Ib failure: " + std::strerror(errorCode) + ")";
}

// CudaError and CuError are defined in src/gpu/gpu_errors.cc, where CUDA error codes are decoded.

}  // namespace mscclpp
