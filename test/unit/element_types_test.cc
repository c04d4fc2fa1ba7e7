// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The extensions' element-type table (src/ext/common/element_types.hpp): every row agrees with itself
// and with the public enums, and every helper generated from it answers for both enums.

#include "ext/common/element_types.hpp"

#include <gtest/gtest.h>

#include <mscclpp/collectives.hpp>
#include <mscclpp/errors.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <set>
#include <string>

namespace {

using mscclpp::ext::elementName;
using mscclpp::ext::elementSize;
using CollType = mscclpp::collectives::DataType;
using ExecType = mscclpp::DataType;

/// Every collectives::DataType value (the enum is numbered 0..NumDataTypes-1 as ncclDataType_t).
std::vector<CollType> allCollectivesTypes() {
  std::vector<CollType> all;
  for (int i = 0; i < mscclpp::collectives::NumDataTypes; ++i) all.push_back(static_cast<CollType>(i));
  return all;
}

/// Every mscclpp::DataType value, INT32 through FP8_E5M2, as the reference numbers them.
std::vector<ExecType> allExecutorTypes() {
  std::vector<ExecType> all;
  for (int i = 0; i <= static_cast<int>(ExecType::FP8_E5M2); ++i) all.push_back(static_cast<ExecType>(i));
  return all;
}

/// The size of the C++ type the table gives `type`.
size_t cppTypeSize(CollType type) {
  size_t size = 0;
  EXPECT_TRUE(mscclpp::ext::withElementType(type, [&](auto tag) { size = sizeof(typename decltype(tag)::Type); }));
  return size;
}

}  // namespace

TEST(ElementTypes, EveryCollectivesTypeHasARowWhoseSizeIsItsCppTypes) {
  for (CollType t : allCollectivesTypes()) {
    EXPECT_TRUE(mscclpp::ext::isElementType(t)) << static_cast<int>(t);
    EXPECT_GT(elementSize(t), 0u) << elementName(t);
    EXPECT_EQ(elementSize(t), cppTypeSize(t)) << elementName(t);
  }
}

TEST(ElementTypes, NamesAreDistinctAndTheOnesNcclTestsPrints) {
  std::set<std::string> names;
  for (CollType t : allCollectivesTypes()) names.insert(elementName(t));
  EXPECT_EQ(names.size(), static_cast<size_t>(mscclpp::collectives::NumDataTypes));
  EXPECT_STREQ(elementName(CollType::Float16), "half");
  EXPECT_STREQ(elementName(CollType::Float64), "double");
  EXPECT_STREQ(elementName(CollType::Fp8E4M3), "f8e4m3");
}

TEST(ElementTypes, PublicHelpersAnswerFromTheTable) {
  for (CollType t : allCollectivesTypes()) {
    EXPECT_EQ(mscclpp::collectives::dataTypeSize(t), elementSize(t)) << elementName(t);
    EXPECT_STREQ(mscclpp::collectives::dataTypeName(t), elementName(t));
  }
}

TEST(ElementTypes, EveryExecutorTypeConvertsAndComesBack) {
  std::set<int> reached;
  for (ExecType e : allExecutorTypes()) {
    EXPECT_TRUE(mscclpp::ext::isElementType(e)) << static_cast<int>(e);
    const CollType c = mscclpp::ext::toCollectivesType(e, static_cast<CollType>(-1));
    ASSERT_TRUE(mscclpp::ext::isElementType(c)) << static_cast<int>(e);
    reached.insert(static_cast<int>(c));
    ExecType back{};
    ASSERT_TRUE(mscclpp::ext::toExecutorType(c, back)) << elementName(c);
    EXPECT_EQ(back, e) << elementName(c);
    EXPECT_EQ(elementSize(e), elementSize(c));
    EXPECT_STREQ(elementName(e), elementName(c));
  }
  EXPECT_EQ(reached.size(), allExecutorTypes().size()) << "two executor types map onto one collectives type";
}

TEST(ElementTypes, CollectivesTypesWithoutAnExecutorTypeSayNo) {
  int without = 0;
  for (CollType c : allCollectivesTypes()) {
    ExecType e = ExecType::FLOAT32;
    if (mscclpp::ext::toExecutorType(c, e)) {
      EXPECT_EQ(mscclpp::ext::toCollectivesType(e, static_cast<CollType>(-1)), c) << elementName(c);
    } else {
      EXPECT_EQ(e, ExecType::FLOAT32) << "left untouched";
      ++without;
    }
  }
  // int8, uint8, int64, uint64, double: the reference's executor enum has none of them.
  EXPECT_EQ(without, mscclpp::collectives::NumDataTypes - static_cast<int>(allExecutorTypes().size()));
}

TEST(ElementTypes, ValuesOutsideTheEnumsAreRefused) {
  const CollType badColl = static_cast<CollType>(mscclpp::collectives::NumDataTypes);
  const ExecType badExec = static_cast<ExecType>(static_cast<int>(ExecType::FP8_E5M2) + 1);
  EXPECT_FALSE(mscclpp::ext::isElementType(badColl));
  EXPECT_FALSE(mscclpp::ext::isElementType(badExec));
  EXPECT_EQ(elementSize(badColl), 0u);
  EXPECT_STREQ(elementName(badExec), "unknown");
  EXPECT_EQ(mscclpp::ext::toCollectivesType(badExec, CollType::Int8), CollType::Int8);
  bool called = false;
  EXPECT_FALSE(mscclpp::ext::withElementType(badColl, [&](auto) { called = true; }));
  EXPECT_FALSE(called);
  EXPECT_THROW(mscclpp::collectives::dataTypeSize(badColl), mscclpp::Error);
  EXPECT_STREQ(mscclpp::collectives::dataTypeName(badColl), "unknown");
}
