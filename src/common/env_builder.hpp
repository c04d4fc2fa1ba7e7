// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_COMMON_ENV_BUILDER_HPP_
#define MSCCLPP_COMMON_ENV_BUILDER_HPP_

#include <map>
#include <mscclpp/env.hpp>
#include <string>

namespace mscclpp {

/// Builds `Env` objects from something other than the process environment (tests), and reads what
/// `env()` could not parse.
class EnvBuilder {
 public:
  static std::shared_ptr<Env> fromMap(const std::map<std::string, std::string>& vars);
  static const std::string& problems(const Env& env) { return env.problems_; }
  static bool isSet(const Env& env, const std::string& name) { return env.present_.count(name) != 0; }
};

}  // namespace mscclpp

#endif  // MSCCLPP_COMMON_ENV_BUILDER_HPP_
