/* Copyright (c) 2026 The libmscclpp authors
 * SPDX-License-Identifier: MIT */

/* The names of NCCL 2.28's device API, without the API: libmscclpp_nccl.so offers no device
 * communicators, LSA pointers, LSA barriers or multimem pointers.
 *
 * Why the header exists: programs built against an NCCL 2.28 nccl.h may include nccl_device.h and
 * compile device-API code that they run only on request. nccl-tests 2.18 and later do both: common.h
 * includes this header whenever NCCL_VERSION_CODE is 2.28 or newer, and each test compiles its
 * device-API kernels, which run only with -D 1 or higher (default -D 0: NCCL's own collectives). The
 * NCCL home of an install (<prefix>/lib/mscclpp_nccl/include) ships this header so that such programs
 * build against our nccl.h unchanged, instead of failing, or silently taking another NCCL's
 * nccl_device.h from a later include directory.
 *
 * What it declares is what those programs use, and no more:
 *   - host side: ncclTeam, ncclDevCommRequirements (NCCL 2.28.3's layout), ncclDevComm (only its
 *     rank, nRanks and lsaBarrier fields: it is not NCCL's structure), ncclDevCommCreate and
 *     ncclDevCommDestroy;
 *   - device side (CUDA only): ncclCoopCta, ncclLsaBarrierSession, ncclTeamLsa, ncclGetLsaPointer and
 *     ncclGetLsaMultimemPointer. These cannot do their work here: each prints what was called and
 *     stops the kernel (__trap()), so a device-API kernel fails visibly instead of computing garbage.
 * Device communicators come only from a real NCCL kept alongside (docs/nccl.md); without one,
 * ncclDevCommCreate fails with ncclInvalidUsage, and programs such as nccl-tests stop there. */

#ifndef MSCCLPP_NCCL_DEVICE_H_
#define MSCCLPP_NCCL_DEVICE_H_

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t ncclDevResourceHandle;
typedef ncclDevResourceHandle ncclDevResourceHandle_t;

/* A set of ranks: nRanks of them, this one at `rank`, consecutive members `stride` world ranks apart. */
typedef struct ncclTeam {
  int nRanks, rank, stride;
} ncclTeam_t;

typedef struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
} ncclLsaBarrierHandle_t;

typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;

/* What a device communicator is asked to provide (NCCL 2.28.3's layout). */
typedef struct ncclDevCommRequirements {
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;
  bool lsaMultimem;
  int lsaBarrierCount;
} ncclDevCommRequirements_t;

/* The fields of a device communicator that device code reads by name. */
typedef struct ncclDevComm {
  int rank, nRanks;
  ncclLsaBarrierHandle_t lsaBarrier;
} ncclDevComm_t;

ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t* reqs, ncclDevComm_t* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t* devComm);

#ifdef __cplusplus
} /* extern "C" */

struct ncclTeamTagWorld {};
struct ncclTeamTagLsa {};
#endif

#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
#include <cstdio>
#include <cuda/atomic>

/* Stops the calling kernel: the device API is not offered (see the top of this file). */
__device__ inline void ncclDeviceApiNotOffered(const char* what) {
  printf("%s: libmscclpp_nccl offers no NCCL device API (nccl_device.h of its NCCL home only declares it)\n", what);
  __trap();
}

/* A cooperative group of the threads of one CTA. */
struct ncclCoopCta {};

template <typename Coop>
struct ncclLsaBarrierSession {
  __device__ ncclLsaBarrierSession(Coop, ncclDevComm const&, ncclTeam, ncclLsaBarrierHandle, uint32_t /*index*/,
                                   bool /*multimem*/ = false) {
    ncclDeviceApiNotOffered("ncclLsaBarrierSession");
  }
  __device__ ncclLsaBarrierSession(Coop, ncclDevComm const&, ncclTeamTagLsa, uint32_t /*index*/,
                                   bool /*multimem*/ = false) {
    ncclDeviceApiNotOffered("ncclLsaBarrierSession");
  }
  __device__ void sync(Coop, cuda::memory_order) { ncclDeviceApiNotOffered("ncclLsaBarrierSession::sync"); }
};

__device__ inline ncclTeam ncclTeamLsa(ncclDevComm const&) {
  ncclDeviceApiNotOffered("ncclTeamLsa");
  return ncclTeam{0, 0, 0};
}

__device__ inline void* ncclGetLsaPointer(ncclWindow_t, size_t, int) {
  ncclDeviceApiNotOffered("ncclGetLsaPointer");
  return nullptr;
}

__device__ inline void* ncclGetLsaMultimemPointer(ncclWindow_t, size_t, ncclDevComm const&) {
  ncclDeviceApiNotOffered("ncclGetLsaMultimemPointer");
  return nullptr;
}
#endif

#endif /* MSCCLPP_NCCL_DEVICE_H_ */
