// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/serialization.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <mscclpp/errors.hpp>
#include <random>

using namespace mscclpp;

namespace {

enum class Color : int32_t { Red, Green, Blue };

void expectInvalidUsage(const std::function<void()>& fn, const std::string& fragment) {
  try {
    fn();
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SerializationTest, RoundTripsValuesAndBytes) {
  ByteWriter writer;
  writer.put<uint64_t>(0x1122334455667788ULL).put<int32_t>(-5).put(Color::Blue);
  writer.putSizedBytes({'a', 'b', 'c'});
  std::vector<char> bytes = writer.take();

  ByteReader reader(bytes, "Thing");
  EXPECT_EQ(reader.get<uint64_t>("u64"), 0x1122334455667788ULL);
  EXPECT_EQ(reader.get<int32_t>("i32"), -5);
  EXPECT_EQ(reader.getEnum<Color>("color", Color::Red, Color::Blue), Color::Blue);
  EXPECT_EQ(reader.getSizedBytes(16, "name"), (std::vector<char>{'a', 'b', 'c'}));
  EXPECT_EQ(reader.remaining(), 0u);
  reader.expectEnd();
}

TEST(SerializationTest, TruncatedInputThrowsNamingTheField) {
  std::vector<char> bytes(5, 0);
  ByteReader reader(bytes, "Endpoint");
  expectInvalidUsage([&] { reader.get<uint64_t>("hostHash"); },
                     "Endpoint: truncated input: hostHash needs 8 bytes, 5 left");
}

TEST(SerializationTest, EmptyAndNullInputThrow) {
  ByteReader empty(std::vector<char>{}, "X");
  expectInvalidUsage([&] { empty.get<int>("a"); }, "truncated");
  ByteReader null(nullptr, 100, "X");
  expectInvalidUsage([&] { null.get<char>("a"); }, "truncated");
}

TEST(SerializationTest, TrailingBytesAreRejected) {
  std::vector<char> bytes(9, 0);
  ByteReader reader(bytes, "Handle");
  reader.get<uint64_t>("v");
  expectInvalidUsage([&] { reader.expectEnd(); }, "1 unexpected trailing bytes");
}

TEST(SerializationTest, OversizedLengthIsRejectedBeforeAllocating) {
  ByteWriter writer;
  writer.put<uint64_t>(1ULL << 62);  // claims 4 EiB
  std::vector<char> bytes = writer.take();
  ByteReader reader(bytes, "Msg");
  expectInvalidUsage([&] { reader.getSizedBytes(1 << 20, "payload"); }, "more than the limit");
}

TEST(SerializationTest, LengthBeyondTheInputIsRejected) {
  ByteWriter writer;
  writer.put<uint64_t>(100).putBytes("abc", 3);
  std::vector<char> bytes = writer.take();
  ByteReader reader(bytes, "Msg");
  expectInvalidUsage([&] { reader.getSizedBytes(1000, "payload"); }, "claims 100 bytes, 3 left");
}

TEST(SerializationTest, OutOfRangeEnumIsRejected) {
  ByteWriter writer;
  writer.put<int32_t>(7);
  std::vector<char> bytes = writer.take();
  ByteReader reader(bytes, "Thing");
  expectInvalidUsage([&] { reader.getEnum<Color>("color", Color::Red, Color::Blue); }, "color has invalid value 7");
}

TEST(SerializationTest, RandomInputNeverReadsOutOfBounds) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000; ++i) {
    std::vector<char> bytes(rng() % 64);
    for (char& c : bytes) c = static_cast<char>(rng());
    ByteReader reader(bytes, "Random");
    try {
      reader.get<uint32_t>("a");
      reader.getSizedBytes(32, "b");
      reader.getEnum<Color>("c", Color::Red, Color::Blue);
      reader.expectEnd();
    } catch (const Error& e) {
      ASSERT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    }
  }
}
