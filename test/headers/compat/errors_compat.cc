// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/errors.hpp>
#include <string>
#include <type_traits>

namespace compat {

static_assert(std::is_base_of_v<std::runtime_error, mscclpp::BaseError>);
static_assert(std::is_base_of_v<mscclpp::BaseError, mscclpp::SysError>);
static_assert(std::is_base_of_v<mscclpp::BaseError, mscclpp::CudaError>);
static_assert(std::is_base_of_v<mscclpp::BaseError, mscclpp::CuError>);
static_assert(std::is_base_of_v<mscclpp::BaseError, mscclpp::IbError>);

int useErrors() {
  std::string name = mscclpp::errorToString(mscclpp::ErrorCode::RemoteError);
  try {
    throw mscclpp::Error("x", mscclpp::ErrorCode::InvalidUsage);
  } catch (const mscclpp::Error& e) {
    return static_cast<int>(e.getErrorCode()) + static_cast<int>(name.size());
  } catch (const mscclpp::BaseError& e) {
    return e.getErrorCode();
  }
  switch (mscclpp::ErrorCode code = mscclpp::ErrorCode::Timeout) {
    case mscclpp::ErrorCode::SystemError:
    case mscclpp::ErrorCode::InternalError:
    case mscclpp::ErrorCode::RemoteError:
    case mscclpp::ErrorCode::InvalidUsage:
    case mscclpp::ErrorCode::Timeout:
    case mscclpp::ErrorCode::Aborted:
    case mscclpp::ErrorCode::ExecutorError:
      return static_cast<int>(code);
  }
  return 0;
}

}  // namespace compat
