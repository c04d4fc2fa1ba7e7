// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Small host utilities: a hash combiner, the host name, and the InfiniBand device lookup.

#ifndef MSCCLPP_UTILS_HPP_
#define MSCCLPP_UTILS_HPP_

#include <cstddef>
#include <functional>
#include <string>

#include "core.hpp"

namespace mscclpp {
namespace detail {

/// Mixes the std::hash of `value` into `seed` (the boost::hash_combine recipe), for hashing tuples of
/// fields in a fixed order.
template <typename T>
inline void hashCombine(std::size_t& seed, const T& value) {
  seed ^= std::hash<T>{}(value) + 0x9e3779b9 + (seed << 6) + (seed >> 2);
}

}  // namespace detail

/// The host name, cut before the first `delim` and to at most `maxlen - 1` characters (`maxlen` counts
/// a terminating NUL, as gethostname's buffer length does). getHostName(1024, '.') is the short name.
/// Throws Error(InvalidUsage) for `maxlen` < 1 and Error(SystemError) if gethostname fails.
std::string getHostName(int maxlen, const char delim);

/// The InfiniBand device lookup, declared here as well as in core.hpp (as the reference does); see
/// core.hpp for what each returns.
int getIBDeviceCount();
std::string getIBDeviceName(Transport ibTransport);
Transport getIBTransportByDeviceName(const std::string& ibDeviceName);

}  // namespace mscclpp

#endif  // MSCCLPP_UTILS_HPP_
