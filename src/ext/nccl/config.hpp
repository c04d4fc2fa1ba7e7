// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Reading a caller's ncclConfig_t the way NCCL does: copy min(config->size, sizeof(ncclConfig_t))
// bytes over NCCL_CONFIG_INITIALIZER (a smaller, older struct keeps defaults for the fields it lacks;
// a larger, newer one has its extra fields ignored), reject a bad magic, and reset the fields that
// the struct's version did not have yet.

#ifndef MSCCLPP_EXT_NCCL_CONFIG_HPP_
#define MSCCLPP_EXT_NCCL_CONFIG_HPP_

#include <mscclpp/nccl.h>

#include <string>

namespace mscclpp::nccl {

struct CommConfig {
  bool blocking = true;
  bool splitShare = false;
  std::string commName;
  /// The caller's settings as a complete ncclConfig_t of this header's version, defaults filled in
  /// (commName left null: the copy in `commName` owns the text).
  ncclConfig_t settings = NCCL_CONFIG_INITIALIZER;

  /// The config for a real NCCL communicator made alongside ours: blocking, since our own thread
  /// drives it; valid while this object lives.
  ncclConfig_t realConfig() const {
    ncclConfig_t config = settings;
    config.blocking = 1;
    config.commName = commName.empty() ? nullptr : commName.c_str();
    return config;
  }
};

/// The configuration `config` asks for (nullptr: the defaults). On a bad config, returns false and
/// sets `problem`.
bool readConfig(const ncclConfig_t* config, CommConfig& out, std::string& problem);

}  // namespace mscclpp::nccl

#endif  // MSCCLPP_EXT_NCCL_CONFIG_HPP_
