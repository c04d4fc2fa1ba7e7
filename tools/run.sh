#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# The README's main command: builds if needed, then runs mscclpp-bench as ${MSCCLPP_BENCH_RANKS:-2}
# local ranks (a private MPS daemon when ranks share a GPU). Arguments go to mscclpp-bench
# (--quick, --list, --sections a,b).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MSCCLPP_BUILD_DIR:-$root/build}
ranks=${MSCCLPP_BENCH_RANKS:-2}

"$root/tools/install-deps.sh" run || exit 1
MSCCLPP_BUILD_DIR=$build "$root/tools/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1

mps_dir=$build/mps-bench
"$root/tools/mps.sh" start "$mps_dir" >/dev/null
trap '"$root/tools/mps.sh" stop "$mps_dir" >/dev/null' EXIT
export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log NCCL_NVLS_ENABLE=0
"$root/test/mp_unit/run_mpi.sh" "$ranks" "$build/test/bench/mscclpp-bench" "$@"
