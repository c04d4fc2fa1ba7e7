// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <mscclpp/utils.hpp>
#include <string>

using namespace mscclpp;

namespace {

std::string systemHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  EXPECT_EQ(gethostname(name, sizeof(name) - 1), 0);
  return name;
}

}  // namespace

TEST(UtilsTest, HostNameIsCutAtTheDelimiter) {
  const std::string full = systemHostName();
  EXPECT_EQ(getHostName(HOST_NAME_MAX + 1, '\0'), full);
  EXPECT_EQ(getHostName(HOST_NAME_MAX + 1, '.'), full.substr(0, full.find('.')));
  ASSERT_FALSE(full.empty());
  const char first = full[0];
  EXPECT_EQ(getHostName(HOST_NAME_MAX + 1, first), "") << "the delimiter is the first character";
}

TEST(UtilsTest, HostNameHasAtMostMaxlenMinusOneCharacters) {
  const std::string full = systemHostName();
  ASSERT_GE(full.size(), 2u);
  EXPECT_EQ(getHostName(2, '\0'), full.substr(0, 1));
  EXPECT_EQ(getHostName(1, '\0'), "");
}

TEST(UtilsTest, HostNameRejectsANonPositiveMaxlen) {
  try {
    getHostName(0, '.');
    FAIL() << "getHostName(0) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
  }
  EXPECT_THROW(getHostName(-5, '.'), Error);
}

TEST(UtilsTest, HashCombineDependsOnTheValuesAndTheirOrder) {
  size_t ab = 0;
  detail::hashCombine(ab, 1);
  detail::hashCombine(ab, 2);
  size_t ba = 0;
  detail::hashCombine(ba, 2);
  detail::hashCombine(ba, 1);
  size_t again = 0;
  detail::hashCombine(again, 1);
  detail::hashCombine(again, 2);
  EXPECT_NE(ab, 0u);
  EXPECT_NE(ab, ba);
  EXPECT_EQ(ab, again);
}
