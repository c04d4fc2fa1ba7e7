// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <gtest/gtest.h>

#include <cerrno>
#include <mscclpp/errors.hpp>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"

using namespace mscclpp;

TEST(ErrorsTest, EveryErrorCodeHasItsName) {
  EXPECT_EQ(errorToString(ErrorCode::SystemError), "SystemError");
  EXPECT_EQ(errorToString(ErrorCode::InternalError), "InternalError");
  EXPECT_EQ(errorToString(ErrorCode::RemoteError), "RemoteError");
  EXPECT_EQ(errorToString(ErrorCode::InvalidUsage), "InvalidUsage");
  EXPECT_EQ(errorToString(ErrorCode::Timeout), "Timeout");
  EXPECT_EQ(errorToString(ErrorCode::Aborted), "Aborted");
  EXPECT_EQ(errorToString(ErrorCode::ExecutorError), "ExecutorError");
}

TEST(ErrorsTest, ErrorWhatAppendsTheCodeName) {
  Error error("connect failed", ErrorCode::Timeout);
  EXPECT_STREQ(error.what(), "connect failed (mscclpp failure: Timeout)");
  EXPECT_EQ(error.getErrorCode(), ErrorCode::Timeout);
  const BaseError& base = error;
  EXPECT_EQ(base.getErrorCode(), static_cast<int>(ErrorCode::Timeout));
}

TEST(ErrorsTest, RemoteErrorIsNamedNotUnknown) {
  Error error("peer failed", ErrorCode::RemoteError);
  EXPECT_STREQ(error.what(), "peer failed (mscclpp failure: RemoteError)");
}

TEST(ErrorsTest, SysErrorDecodesErrno) {
  SysError error("open", ENOENT);
  EXPECT_STREQ(error.what(), "open (System failure: No such file or directory)");
  EXPECT_EQ(error.getErrorCode(), ENOENT);
}

TEST(ErrorsTest, CudaErrorDecodesTheRuntimeError) {
  CudaError error("cudaMalloc", cudaErrorMemoryAllocation);
  EXPECT_EQ(std::string(error.what()), std::string("cudaMalloc (Cuda failure: cudaErrorMemoryAllocation: ") +
                                           cudaGetErrorString(cudaErrorMemoryAllocation) + ")");
}

TEST(ErrorsTest, CuErrorNamesTheResultEvenWithoutADriver) {
  CuError error("cuMemCreate", CUDA_ERROR_NOT_PERMITTED);
  std::string what = error.what();
  EXPECT_EQ(what.rfind("cuMemCreate (Cu failure: ", 0), 0u) << what;
  // With a driver the name is decoded by it; without one the number is kept.
  EXPECT_TRUE(what.find("CUDA_ERROR_NOT_PERMITTED") != std::string::npos ||
              what.find(std::to_string(static_cast<int>(CUDA_ERROR_NOT_PERMITTED))) != std::string::npos)
      << what;
}

TEST(ErrorsTest, IbErrorDecodesErrno) {
  IbError error("ibv_reg_mr", EACCES);
  EXPECT_STREQ(error.what(), "ibv_reg_mr (Ib failure: Permission denied)");
}

TEST(ErrorsTest, AllErrorsAreCaughtAsBaseError) {
  EXPECT_THROW(throw SysError("x", EIO), BaseError);
  EXPECT_THROW(throw CudaError("x", 1), BaseError);
  EXPECT_THROW(throw CuError("x", 1), BaseError);
  EXPECT_THROW(throw IbError("x", 1), BaseError);
  EXPECT_THROW(throw Error("x", ErrorCode::Aborted), std::runtime_error);
}

TEST(ChecksTest, SyscheckThrowsSysErrorWithTheCallText) {
  auto failingCall = []() {
    errno = EBADF;
    return -1;
  };
  try {
    MSCCLPP_SYSCHECK(failingCall());
    FAIL() << "no exception";
  } catch (const SysError& e) {
    EXPECT_EQ(e.getErrorCode(), EBADF);
    EXPECT_NE(std::string(e.what()).find("failingCall()"), std::string::npos) << e.what();
  }
}

TEST(ChecksTest, CheckUsageThrowsInvalidUsageWithTheMessage) {
  try {
    int size = -3;
    MSCCLPP_CHECK_USAGE(size >= 0, "size must not be negative, got ", size);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_STREQ(e.what(), "size must not be negative, got -3 (mscclpp failure: InvalidUsage)");
  }
}

TEST(ChecksTest, AssertThrowsInternalErrorNamingTheCondition) {
  try {
    MSCCLPP_ASSERT(1 + 1 == 3, "arithmetic");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InternalError);
    EXPECT_NE(std::string(e.what()).find("1 + 1 == 3"), std::string::npos) << e.what();
  }
}

TEST(ChecksTest, CheckMacrosAreSingleStatements) {
  // An unbraced if/else around the macros must compile and take the right branch.
  int taken = 0;
  if (taken == 0)
    MSCCLPP_CHECK_USAGE(true, "never");
  else
    taken = 1;
  EXPECT_EQ(taken, 0);
}

TEST(ChecksTest, ErrnoNameGivesSymbolAndText) {
  EXPECT_EQ(errnoName(ECONNREFUSED), "ECONNREFUSED (Connection refused)");
}
