#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# The README's main command: builds if needed, then runs as ${MSCCLPP_BENCH_RANKS:-2} local ranks (a
# private MPS daemon when ranks share a GPU) first the collectives table (mscclpp-coll-bench: every
# collective as a CUDA graph, 1 KiB to 64 MiB, each time beside its same-run floor), then mscclpp-bench.
# Arguments go to mscclpp-bench (--quick, --list, --sections a,b); with --list or --sections the
# collectives table is left out, with --quick it stops at 1 MiB.
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
collectives=1
largest=64M
for arg in "$@"; do
  case $arg in
  --list | --sections) collectives=0 ;;
  --quick) largest=1M ;;
  esac
done
if [ $collectives = 1 ]; then
  "$root/test/mp_unit/run_mpi.sh" "$ranks" "$build/test/bench/mscclpp-coll-bench" -C all -b 1K -e "$largest" -f 4 \
    -n 20 -w 5 -c 1 -G 10 || exit 1
fi
"$root/test/mp_unit/run_mpi.sh" "$ranks" "$build/test/bench/mscclpp-bench" "$@"
