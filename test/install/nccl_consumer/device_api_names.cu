// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Device code written against NCCL 2.28's device API in the forms NCCL's own tests use (nccl-tests
// compiles kernels like this one whenever nccl.h says 2.28): it must compile against the NCCL home's
// nccl_device.h, which declares those names without offering the API. Compiled only, never run.

#include <nccl.h>
#include <nccl_device.h>

template <typename T>
__global__ void copyFromEveryPeer(ncclWindow_t send, size_t sendOffset, ncclWindow_t recv, size_t recvOffset,
                                  size_t count, ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  T* out = static_cast<T*>(ncclGetLsaPointer(recv, recvOffset, devComm.rank));
  for (int peer = 0; peer < devComm.nRanks; ++peer) {
    const T* in = static_cast<const T*>(ncclGetLsaPointer(send, sendOffset, peer));
    for (size_t i = threadIdx.x; i < count; i += blockDim.x) out[i] += in[i];
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

template <typename T>
__global__ void multimemCopy(ncclWindow_t send, size_t sendOffset, ncclWindow_t recv, size_t recvOffset, size_t count,
                             ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamTagLsa(), blockIdx.x, true};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  T* in = static_cast<T*>(ncclGetLsaMultimemPointer(send, sendOffset, devComm));
  T* out = static_cast<T*>(ncclGetLsaMultimemPointer(recv, recvOffset, devComm));
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) out[i] = in[i];
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

ncclResult_t launch(ncclComm_t comm, ncclWindow_t send, ncclWindow_t recv, size_t count, cudaStream_t stream) {
  ncclDevCommRequirements reqs = {};
  reqs.lsaBarrierCount = 1;
  reqs.lsaMultimem = true;
  ncclDevComm devComm;
  ncclResult_t res = ncclDevCommCreate(comm, &reqs, &devComm);
  if (res != ncclSuccess) return res;
  copyFromEveryPeer<float><<<1, 128, 0, stream>>>(send, 0, recv, 0, count, devComm);
  multimemCopy<float><<<1, 128, 0, stream>>>(send, 0, recv, 0, count, devComm);
  return ncclDevCommDestroy(comm, &devComm);
}
