/* Copyright (c) 2026 The libmscclpp authors
 * SPDX-License-Identifier: MIT */

/* A C program built the way NCCL's consumers are built, against the install's NCCL home or its CMake
 * target. It prints the version its nccl.h declares and the version of the library it runs, so that the
 * install check can tell which header was compiled in and which libnccl.so.2 was loaded. No GPU is
 * needed. */

#include <nccl.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  ncclResult_t res = ncclGetVersion(&version);
  if (res != ncclSuccess) {
    printf("ncclGetVersion failed: %s\n", ncclGetErrorString(res));
    return 1;
  }
  printf("nccl.h %d, library %d\n", NCCL_VERSION_CODE, version);
  return 0;
}
