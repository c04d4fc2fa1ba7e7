// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The one way bytes become objects and back. Every deserializer reads through ByteReader, which checks
// each read against the bytes that are left, so truncated, oversized or random input ends in
// Error(InvalidUsage) naming what was being read, never an out-of-bounds read or an absurd allocation.

#ifndef MSCCLPP_COMMON_SERIALIZATION_HPP_
#define MSCCLPP_COMMON_SERIALIZATION_HPP_

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace mscclpp {

class ByteWriter {
 public:
  template <typename T>
  ByteWriter& put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "only trivially copyable values are written raw");
    return putBytes(&value, sizeof(T));
  }

  ByteWriter& putBytes(const void* data, size_t size);

  /// A length (u64) then the bytes, read back by ByteReader::getSizedBytes.
  ByteWriter& putSizedBytes(const std::vector<char>& bytes);

  const std::vector<char>& bytes() const { return bytes_; }
  std::vector<char> take() { return std::move(bytes_); }

 private:
  std::vector<char> bytes_;
};

class ByteReader {
 public:
  /// `what` names the object being read (e.g. "Endpoint") in error messages.
  ByteReader(const char* data, size_t size, const char* what);
  ByteReader(const std::vector<char>& bytes, const char* what) : ByteReader(bytes.data(), bytes.size(), what) {}

  template <typename T>
  T get(const char* field) {
    static_assert(std::is_trivially_copyable_v<T>, "only trivially copyable values are read raw");
    T value;
    getBytes(&value, sizeof(T), field);
    return value;
  }

  void getBytes(void* out, size_t size, const char* field);

  /// Reads a u64 length then that many bytes; a length over `maxSize` or over what is left throws
  /// before anything is allocated.
  std::vector<char> getSizedBytes(size_t maxSize, const char* field);

  /// Throws unless an enum value read as its underlying integer lies in [first, last].
  template <typename E>
  E getEnum(const char* field, E first, E last) {
    using U = std::underlying_type_t<E>;
    U raw = get<U>(field);
    if (raw < static_cast<U>(first) || raw > static_cast<U>(last)) failOutOfRange(field, static_cast<long long>(raw));
    return static_cast<E>(raw);
  }

  size_t remaining() const { return size_ - offset_; }
  size_t offset() const { return offset_; }

  /// Throws unless every byte has been read: trailing bytes mean the input is not what it claims.
  void expectEnd() const;

  /// Throws Error(InvalidUsage) "<what>: <message> at byte <offset>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  [[noreturn]] void failOutOfRange(const char* field, long long value) const;

  const char* data_;
  size_t size_;
  size_t offset_ = 0;
  const char* what_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_COMMON_SERIALIZATION_HPP_
