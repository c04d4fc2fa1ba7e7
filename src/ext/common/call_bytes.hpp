// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The byte size of a collective call's buffer from its element count, checked the same way by the
// collectives and the NCCL API, so that no count a caller passes can wrap into a small size and let a
// kernel run past a buffer.

#ifndef MSCCLPP_EXT_COMMON_CALL_BYTES_HPP_
#define MSCCLPP_EXT_COMMON_CALL_BYTES_HPP_

#include <cstdint>

namespace mscclpp {
namespace ext {

/// The most bytes one buffer of a call may span: 64 PiB, beyond the memory of any GPU, and low enough
/// that no size the library derives from it (a chunk rounded up, packets of twice the payload, a rank's
/// part times the rank count) can wrap in 64 bits.
constexpr uint64_t kMaxCallBytes = uint64_t{1} << 56;

/// Sets `bytes` to `parts` x `count` elements of `elemSize` bytes and returns true, or returns false
/// (`bytes` untouched) where that is more than kMaxCallBytes. Nothing wraps, however large the operands.
inline bool callBytes(uint64_t count, uint64_t parts, uint64_t elemSize, uint64_t& bytes) {
  if (parts == 0 || elemSize == 0) {
    bytes = 0;
    return true;
  }
  if (count > kMaxCallBytes / parts / elemSize) return false;
  bytes = count * parts * elemSize;
  return true;
}

}  // namespace ext
}  // namespace mscclpp

#endif  // MSCCLPP_EXT_COMMON_CALL_BYTES_HPP_
