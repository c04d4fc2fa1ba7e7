// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_COMMON_INVALID_USAGE_HPP_
#define MSCCLPP_TEST_COMMON_INVALID_USAGE_HPP_

#include <gtest/gtest.h>

#include <functional>
#include <mscclpp/errors.hpp>
#include <string>

namespace mscclpp::test {

/// The message of the Error(InvalidUsage) that `f` throws, or "" (a failed expectation) when it throws
/// none; another error code is a failed expectation too.
inline std::string invalidUsage(const std::function<void()>& f) {
  try {
    f();
  } catch (const mscclpp::Error& e) {
    EXPECT_EQ(e.getErrorCode(), mscclpp::ErrorCode::InvalidUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no Error(InvalidUsage) thrown";
  return "";
}

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_COMMON_INVALID_USAGE_HPP_
