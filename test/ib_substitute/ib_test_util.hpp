// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Helpers of the IB tests that run against the SUBSTITUTE verbs provider (ibv_substitute.cc).

#ifndef MSCCLPP_TEST_IB_SUBSTITUTE_IB_TEST_UTIL_HPP_
#define MSCCLPP_TEST_IB_SUBSTITUTE_IB_TEST_UTIL_HPP_

#include <dlfcn.h>

#include <cstdlib>
#include <mscclpp/core.hpp>
#include <mscclpp/errors.hpp>
#include <string>

namespace mscclpp::test {

/// The substitute's fault hook, when MSCCLPP_IBV_SO names the substitute (loaded by then); else nullptr.
inline int (*ibSubstituteInjectFn())(const char*) {
  const char* so = std::getenv("MSCCLPP_IBV_SO");
  if (so == nullptr) return nullptr;
  void* handle = dlopen(so, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen(so, RTLD_NOW);
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<int (*)(const char*)>(dlsym(handle, "mscclppIbvSubstituteInject"));
}

inline bool ibSubstituteLoaded() { return ibSubstituteInjectFn() != nullptr; }

/// Injects `fault` ("qp-error", "fail-next-completion") into this process's substitute.
inline void ibSubstituteInject(const char* fault) {
  auto fn = ibSubstituteInjectFn();
  if (fn == nullptr || fn(fault) != 0) throw std::runtime_error(std::string("cannot inject ") + fault);
}

/// The message of the mscclpp::Error that `fn` throws, checking its code; "" when it throws nothing.
template <typename Fn>
std::string errorOf(Fn&& fn, ErrorCode code, bool* matched) {
  *matched = false;
  try {
    fn();
  } catch (const Error& e) {
    *matched = e.getErrorCode() == code;
    return e.what();
  } catch (const BaseError& e) {
    return std::string("(not an mscclpp::Error) ") + e.what();
  }
  return "";
}

}  // namespace mscclpp::test

/// Runs only with the substitute loaded through MSCCLPP_IBV_SO (the ctest entries set it).
#define MSCCLPP_REQUIRE_IB_SUBSTITUTE()                                                                   \
  do {                                                                                                    \
    if (!::mscclpp::test::ibSubstituteLoaded()) {                                                         \
      GTEST_SKIP() << "needs the substitute verbs provider in MSCCLPP_IBV_SO (set by the ctest entries)"; \
    }                                                                                                     \
  } while (0)

/// Runs only in the ctest entry ib_<config> (MSCCLPP_IB_TEST_CONFIG), whose provider setup it checks.
#define MSCCLPP_REQUIRE_IB_CONFIG(config)                                                                     \
  do {                                                                                                        \
    const char* c_ = std::getenv("MSCCLPP_IB_TEST_CONFIG");                                                   \
    if (c_ == nullptr || std::string(c_).rfind(config, 0) != 0) {                                             \
      GTEST_SKIP() << "runs in the ctest entry ib_" << (config) << "*, which configures the provider for it"; \
    }                                                                                                         \
  } while (0)

#endif  // MSCCLPP_TEST_IB_SUBSTITUTE_IB_TEST_UTIL_HPP_
