// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/nccl/config.hpp"

#include <cstring>

#include "common/strings.hpp"

namespace mscclpp::nccl {

namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;
// ncclConfig_t appeared in NCCL 2.14: a smaller version code is no NCCL version that had it.
constexpr unsigned kFirstConfigVersion = NCCL_VERSION(2, 14, 0);

bool isUndef(int value) { return value == NCCL_CONFIG_UNDEF_INT; }
bool isFlag(int value) { return isUndef(value) || value == 0 || value == 1; }

}  // namespace

bool readConfig(const ncclConfig_t* config, CommConfig& out, std::string& problem) {
  const ncclConfig_t defaults = NCCL_CONFIG_INITIALIZER;
  ncclConfig_t c = defaults;
  if (config != nullptr) {
    size_t size = 0;
    std::memcpy(&size, config, sizeof(size));
    if (size < offsetof(ncclConfig_t, blocking)) {
      problem = concat("ncclConfig_t size ", size, " is smaller than its header (", offsetof(ncclConfig_t, blocking),
                       " bytes): not made with NCCL_CONFIG_INITIALIZER");
      return false;
    }
    std::memcpy(&c, config, size < sizeof(c) ? size : sizeof(c));
    if (c.magic != kConfigMagic) {
      problem = concat("ncclConfig_t magic 0x", std::hex, c.magic,
                       " is not 0xcafebeef: not made with NCCL_CONFIG_INITIALIZER");
      return false;
    }
    if (c.version < kFirstConfigVersion) {
      problem = concat("ncclConfig_t version ", c.version,
                       " is not a version of NCCL with ncclConfig_t (2.14 = ", kFirstConfigVersion, " or later)");
      return false;
    }
    // Fields newer than the caller's version hold whatever its struct had there: use the defaults.
    if (c.version < NCCL_VERSION(2, 17, 0)) {
      c.cgaClusterSize = defaults.cgaClusterSize;
      c.minCTAs = defaults.minCTAs;
      c.maxCTAs = defaults.maxCTAs;
      c.netName = defaults.netName;
    }
    if (c.version < NCCL_VERSION(2, 25, 0)) c.trafficClass = defaults.trafficClass;
    if (c.version < NCCL_VERSION(2, 27, 0)) {
      c.collnetEnable = defaults.collnetEnable;
      c.CTAPolicy = defaults.CTAPolicy;
      c.shrinkShare = defaults.shrinkShare;
      c.nvlsCTAs = defaults.nvlsCTAs;
    }
    if (c.version < NCCL_VERSION(2, 28, 0)) {
      c.nChannelsPerNetPeer = defaults.nChannelsPerNetPeer;
      c.nvlinkCentricSched = defaults.nvlinkCentricSched;
    }
  }
  auto bad = [&](const char* field, int value) {
    problem = concat("ncclConfig_t.", field, " = ", value, " is not a valid value");
    return false;
  };
  if (!isFlag(c.blocking)) return bad("blocking", c.blocking);
  if (!isFlag(c.splitShare)) return bad("splitShare", c.splitShare);
  if (!isFlag(c.shrinkShare)) return bad("shrinkShare", c.shrinkShare);
  if (!isFlag(c.collnetEnable)) return bad("collnetEnable", c.collnetEnable);
  if (!isFlag(c.nvlinkCentricSched)) return bad("nvlinkCentricSched", c.nvlinkCentricSched);
  if (!isUndef(c.cgaClusterSize) && c.cgaClusterSize < 0) return bad("cgaClusterSize", c.cgaClusterSize);
  if (!isUndef(c.minCTAs) && c.minCTAs <= 0) return bad("minCTAs", c.minCTAs);
  if (!isUndef(c.maxCTAs) && c.maxCTAs <= 0) return bad("maxCTAs", c.maxCTAs);
  if (!isUndef(c.minCTAs) && !isUndef(c.maxCTAs) && c.minCTAs > c.maxCTAs) return bad("minCTAs", c.minCTAs);
  if (!isUndef(c.CTAPolicy) && (c.CTAPolicy < NCCL_CTA_POLICY_DEFAULT || c.CTAPolicy > NCCL_CTA_POLICY_ZERO)) {
    return bad("CTAPolicy", c.CTAPolicy);
  }
  if (!isUndef(c.nvlsCTAs) && c.nvlsCTAs <= 0) return bad("nvlsCTAs", c.nvlsCTAs);
  if (!isUndef(c.nChannelsPerNetPeer) && c.nChannelsPerNetPeer <= 0) {
    return bad("nChannelsPerNetPeer", c.nChannelsPerNetPeer);
  }

  out.blocking = isUndef(c.blocking) || c.blocking == 1;
  out.splitShare = !isUndef(c.splitShare) && c.splitShare == 1;
  out.commName = c.commName != nullptr ? c.commName : "";
  c.size = sizeof(ncclConfig_t);
  c.version = NCCL_VERSION_CODE;
  c.commName = nullptr;
  out.settings = c;
  return true;
}

}  // namespace mscclpp::nccl
