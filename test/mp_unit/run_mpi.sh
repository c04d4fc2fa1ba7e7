#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Starts a gtest binary as <np> ranks on this host: run_mpi.sh <np> <binary> [gtest arguments...]
# Ranks on this host inherit this environment (MSCCLPP_*, CUDA_MPS_*). Open MPI needs
# --allow-run-as-root as root and --oversubscribe when ranks outnumber cores.
set -euo pipefail
np=$1
shift
exec mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
  --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
