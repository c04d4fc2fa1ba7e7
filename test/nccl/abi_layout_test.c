/* Copyright (c) 2026 The libmscclpp authors
 * SPDX-License-Identifier: MIT */

/* The ABI of NCCL 2.28.3 that nccl.h must reproduce, checked by a C compiler (the language of the
 * header's users): sizes and offsets at compile time, the initializers and the version at run time
 * through the shared library. Every figure is NCCL 2.28.3's on x86-64. */

#include <nccl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(NCCL_MAJOR == 2 && NCCL_MINOR == 28 && NCCL_PATCH == 3, "version macros");
_Static_assert(NCCL_VERSION_CODE == 22803, "NCCL_VERSION_CODE");
_Static_assert(NCCL_VERSION(2, 28, 3) == 22803 && NCCL_VERSION(2, 8, 4) == 2804, "NCCL_VERSION encoding");
_Static_assert(NCCL_UNIQUE_ID_BYTES == 128 && sizeof(ncclUniqueId) == 128, "ncclUniqueId");
_Static_assert(NCCL_SPLIT_NOCOLOR == -1, "NCCL_SPLIT_NOCOLOR");
_Static_assert(NCCL_CONFIG_UNDEF_INT == (-2147483647 - 1), "NCCL_CONFIG_UNDEF_INT");
_Static_assert(NCCL_WIN_DEFAULT == 0 && NCCL_WIN_COLL_SYMMETRIC == 1 && NCCL_WIN_REQUIRED_ALIGNMENT == 4096,
               "window constants");
_Static_assert(NCCL_CTA_POLICY_DEFAULT == 0 && NCCL_CTA_POLICY_EFFICIENCY == 1 && NCCL_CTA_POLICY_ZERO == 2,
               "CTA policies");
_Static_assert(NCCL_SHRINK_DEFAULT == 0 && NCCL_SHRINK_ABORT == 1, "shrink flags");

_Static_assert(ncclSuccess == 0 && ncclUnhandledCudaError == 1 && ncclSystemError == 2 && ncclInternalError == 3 &&
                   ncclInvalidArgument == 4 && ncclInvalidUsage == 5 && ncclRemoteError == 6 && ncclInProgress == 7 &&
                   ncclNumResults == 8,
               "ncclResult_t");
_Static_assert(ncclSum == 0 && ncclProd == 1 && ncclMax == 2 && ncclMin == 3 && ncclAvg == 4 && ncclNumOps == 5 &&
                   ncclMaxRedOp == 0x7fffffff && sizeof(ncclRedOp_t) == 4,
               "ncclRedOp_t");
_Static_assert(ncclInt8 == 0 && ncclChar == 0 && ncclUint8 == 1 && ncclInt32 == 2 && ncclInt == 2 && ncclUint32 == 3 &&
                   ncclInt64 == 4 && ncclUint64 == 5 && ncclFloat16 == 6 && ncclHalf == 6 && ncclFloat32 == 7 &&
                   ncclFloat == 7 && ncclFloat64 == 8 && ncclDouble == 8 && ncclBfloat16 == 9 && ncclFloat8e4m3 == 10 &&
                   ncclFloat8e5m2 == 11 && ncclNumTypes == 12 && sizeof(ncclDataType_t) == 4,
               "ncclDataType_t");
_Static_assert(ncclScalarDevice == 0 && ncclScalarHostImmediate == 1, "ncclScalarResidence_t");

_Static_assert(sizeof(ncclConfig_t) == 80, "ncclConfig_t size");
_Static_assert(offsetof(ncclConfig_t, size) == 0 && offsetof(ncclConfig_t, magic) == 8 &&
                   offsetof(ncclConfig_t, version) == 12 && offsetof(ncclConfig_t, blocking) == 16 &&
                   offsetof(ncclConfig_t, cgaClusterSize) == 20 && offsetof(ncclConfig_t, minCTAs) == 24 &&
                   offsetof(ncclConfig_t, maxCTAs) == 28 && offsetof(ncclConfig_t, netName) == 32 &&
                   offsetof(ncclConfig_t, splitShare) == 40 && offsetof(ncclConfig_t, trafficClass) == 44 &&
                   offsetof(ncclConfig_t, commName) == 48 && offsetof(ncclConfig_t, collnetEnable) == 56 &&
                   offsetof(ncclConfig_t, CTAPolicy) == 60 && offsetof(ncclConfig_t, shrinkShare) == 64 &&
                   offsetof(ncclConfig_t, nvlsCTAs) == 68 && offsetof(ncclConfig_t, nChannelsPerNetPeer) == 72 &&
                   offsetof(ncclConfig_t, nvlinkCentricSched) == 76,
               "ncclConfig_t offsets");
_Static_assert(sizeof(ncclSimInfo_t) == 24 && offsetof(ncclSimInfo_t, magic) == 8 &&
                   offsetof(ncclSimInfo_t, version) == 12 && offsetof(ncclSimInfo_t, estimatedTime) == 16,
               "ncclSimInfo_t");

static int failures = 0;

static void expect(int cond, const char* what) {
  if (!cond) {
    printf("FAILED: %s\n", what);
    ++failures;
  }
}

int main(void) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  expect(config.size == 80 && config.magic == 0xcafebeef && config.version == 22803, "config header");
  expect(config.blocking == NCCL_CONFIG_UNDEF_INT && config.nvlinkCentricSched == NCCL_CONFIG_UNDEF_INT &&
             config.netName == NULL && config.commName == NULL,
         "config fields undefined");
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  expect(sim.size == 24 && sim.magic == 0x74685283 && sim.version == 22803 && sim.estimatedTime == -1.0f,
         "sim info initializer");
  int version = 0;
  expect(ncclGetVersion(&version) == ncclSuccess && version == 22803, "ncclGetVersion reports 22803");
  expect(strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0, "ncclGetErrorString(ncclSuccess)");
  expect(pncclGetVersion(&version) == ncclSuccess && version == 22803, "pncclGetVersion reports 22803");
  printf("%s\n", failures == 0 ? "ABI layout and version: all checks passed" : "ABI layout and version: FAILED");
  return failures == 0 ? 0 : 1;
}
