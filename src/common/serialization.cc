// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/serialization.hpp"

#include <cstdint>
#include <mscclpp/errors.hpp>

#include "common/strings.hpp"

namespace mscclpp {

ByteWriter& ByteWriter::putBytes(const void* data, size_t size) {
  const char* begin = static_cast<const char*>(data);
  bytes_.insert(bytes_.end(), begin, begin + size);
  return *this;
}

ByteWriter& ByteWriter::putSizedBytes(const std::vector<char>& bytes) {
  put<uint64_t>(bytes.size());
  return putBytes(bytes.data(), bytes.size());
}

ByteReader::ByteReader(const char* data, size_t size, const char* what)
    : data_(data), size_(data ? size : 0), what_(what) {}

void ByteReader::getBytes(void* out, size_t size, const char* field) {
  if (size > remaining()) {
    fail(concat("truncated input: ", field, " needs ", size, " bytes, ", remaining(), " left"));
  }
  std::memcpy(out, data_ + offset_, size);
  offset_ += size;
}

std::vector<char> ByteReader::getSizedBytes(size_t maxSize, const char* field) {
  uint64_t size = get<uint64_t>(field);
  if (size > maxSize) fail(concat(field, " claims ", size, " bytes, more than the limit of ", maxSize));
  if (size > remaining()) fail(concat("truncated input: ", field, " claims ", size, " bytes, ", remaining(), " left"));
  std::vector<char> bytes(data_ + offset_, data_ + offset_ + size);
  offset_ += size;
  return bytes;
}

void ByteReader::expectEnd() const {
  if (remaining() != 0) fail(concat(remaining(), " unexpected trailing bytes"));
}

void ByteReader::fail(const std::string& message) const {
  throw Error(concat(what_, ": ", message, " at byte ", offset_, " of ", size_), ErrorCode::InvalidUsage);
}

void ByteReader::failOutOfRange(const char* field, long long value) const {
  fail(concat(field, " has invalid value ", value));
}

}  // namespace mscclpp
