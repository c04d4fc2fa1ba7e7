#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# The collectives against MSCCL++ a02ba3b1's best kernel, as the medians of several compare.sh runs:
#
#   compare_medians.sh <reference dir> <mscclpp-coll-bench> <out dir> [runs (default 3)]
#
# <reference dir> holds compare.sh (what /work/shared/reference holds). Each run writes <out dir>/run-<i>/;
# <out dir>/compare-median.txt gets, per (collective, ranks, size), the median of our times and the
# median of MSCCL++'s best-kernel times over the valid runs, and their ratio (below 1: we are faster).
# A run is valid when it exited 0 and our flag hop (the bench's floor line) stayed under 20 us: above
# that the ranks were time-sliced instead of sharing the GPU through MPS, and every figure of that run
# measures the scheduler. compare.sh keeps its MPS daemon's pipes under $REF_WORK/mps and starts a
# daemon only where it finds no control pipe; a pipe left by the previous run's daemon, which was still
# exiting, made the next run start none. So between runs this waits for that daemon to answer no more
# and removes its pipes.
set -uo pipefail
usage="usage: compare_medians.sh <reference dir> <mscclpp-coll-bench> <out dir> [runs]"
ref=$(cd "${1:?$usage}" && pwd) || exit 2
bench=$(readlink -f "${2:?$usage}")
out=$(mkdir -p "${3:?$usage}" && cd "$3" && pwd) || exit 2
runs=${4:-3}
[ -x "$ref/compare.sh" ] || { echo "compare_medians.sh: no compare.sh in $ref"; exit 2; }
[ -x "$bench" ] || { echo "compare_medians.sh: $bench is not an executable"; exit 2; }
work=${REF_WORK:-/tmp/mscclpp-ref}
export REF_WORK=$work

forget_mps() {
  local pipes=$work/mps/pipe
  [ -e "$pipes/control" ] || return 0
  for _ in $(seq 20); do
    echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$pipes timeout 1 nvidia-cuda-mps-control >/dev/null 2>&1 || break
    sleep 0.5
  done
  rm -rf "$work/mps"
}

valid=()
for i in $(seq "$runs"); do
  forget_mps
  dir=$out/run-$i
  "$ref/compare.sh" "$bench" "$dir" >"$dir.log" 2>&1
  rc=$?
  hop=$(sed -n 's/^# floors: flag hop \([0-9.]*\) us.*/\1/p' "$dir/compare-raw.txt" 2>/dev/null | sort -g | tail -n 1)
  if [ "$rc" -ne 0 ]; then
    echo "run $i: compare.sh exited $rc (log: $dir.log); not counted"
  elif [ -z "$hop" ] || awk -v h="$hop" 'BEGIN { exit !(h > 20) }'; then
    echo "run $i: our flag hop ${hop:-missing} us (ranks time-sliced, not under MPS); not counted"
  else
    echo "run $i: valid (largest flag hop $hop us)"
    valid+=("$dir/compare.txt")
  fi
done
forget_mps
[ ${#valid[@]} -gt 0 ] || { echo "compare_medians.sh: no valid run"; exit 1; }

python3 - "${valid[@]}" >"$out/compare-median.txt" <<'PY'
import statistics
import sys

rows, failures = {}, []
for path in sys.argv[1:]:
    for line in open(path):
        f = line.split()
        # collective ranks size ours mscclpp (kernel) ratio
        if len(f) == 7 and f[2].isdigit():
            rows.setdefault((f[0], f[1], int(f[2])), []).append((float(f[3]), float(f[4]), f[5]))
        elif line.startswith("FAILED:"):
            failures.append(f"{path}: {line.strip()}")
print(f"medians of {len(sys.argv) - 1} valid run(s)")
print("collective ranks     size_B   ours_us mscclpp_us ours/mscclpp  kernels")
worst = 0.0
for key in sorted(rows):
    v = rows[key]
    ours = statistics.median(x[0] for x in v)
    theirs = statistics.median(x[1] for x in v)
    ratio = ours / theirs
    worst = max(worst, ratio)
    kernels = ",".join(sorted({x[2].strip("()") for x in v}))
    print(f"{key[0]:9s} {key[1]:4s} {key[2]:>10d} {ours:9.2f} {theirs:10.2f} {ratio:12.2f}  {kernels}")
print(f"worst ratio: {worst:.2f}")
for f in failures:
    print("FAILED:", f)
PY
cat "$out/compare-median.txt"
