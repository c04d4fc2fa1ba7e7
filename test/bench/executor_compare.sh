#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# This library's executor against MSCCL++ a02ba3b1's own, on MSCCL++'s own plans, in one run on one
# machine: the SAME program (MSCCL++'s test/executor_test.cc, which times a CUDA graph of executions)
# is built once against each library and both run the same plans at the same sizes, interleaved,
# 2 ranks on one GPU under one MPS daemon.
#
#   executor_compare.sh <reference dir> <our build or install dir> <out dir> [mode...]
#
# <reference dir> holds what /work/shared/reference holds (mscclpp-a02ba3b1/, json/, fold/) and exec/ with
# a02ba3b1's test/executor_test.cc, test/execution-files/allreduce.json and allreduce_packet.json.
# <our build or install dir>: an install prefix (include/mscclpp, lib/libmscclpp.so) or a build tree.
# Modes (default: headline):
#   headline   allreduce.json at 1 MiB and 64 MiB; allreduce_packet.json with LL16 and LL8 at 1 MiB
#   sweep      allreduce.json, and allreduce_packet.json with LL16 and with LL8, at 1 KiB, 4 KiB, ... 256 MiB
#   sweep-simple, sweep-ll16, sweep-ll8   one of the three (a third of the runs)
# Each (plan, packet type, size) runs EXEC_COMPARE_REPS times (default 3) on each side; the table shows
# the medians and ours / MSCCL++ (below 1: we are faster). A run's time is the slowest rank's.
# Writes <out dir>/executor-compare.txt (the table) and executor-compare-raw.txt (every run's output).
# MSCCL++ is built as compare.sh builds it, under $REF_WORK (default /tmp/mscclpp-ref; reused when
# compare.sh or an earlier run built it there). Needs nvcc, cmake, MPI (mpicxx, mpirun), libnuma-dev,
# nlohmann-json3-dev; nvidia-cuda-mps-control to share the GPU cheaply.
set -uo pipefail
usage="usage: executor_compare.sh <reference dir> <our build or install dir> <out dir> [mode...]"
ref=$(cd "${1:?$usage}" && pwd) || exit 2
ours_in=$(cd "${2:?$usage}" && pwd) || exit 2
out=$(mkdir -p "${3:?$usage}" && cd "$3" && pwd) || exit 2
shift 3
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(headline)
here=$(cd "$(dirname "$0")" && pwd)
reps=${EXEC_COMPARE_REPS:-3}
work=${REF_WORK:-/tmp/mscclpp-ref}
mkdir -p "$work"
for f in mscclpp-a02ba3b1/CMakeLists.txt json/CMakeLists.txt fold/fold_gpus.cc exec/executor_test.cc \
  exec/allreduce.json exec/allreduce_packet.json; do
  [ -f "$ref/$f" ] || { echo "executor_compare.sh: $ref/$f is missing"; exit 2; }
done
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
cuda=$(cd "$(dirname "$(readlink -f "$(command -v nvcc)")")/.." && pwd)
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
log=$out/executor-compare-build.log
: >"$log"
fail() { tail -n 30 "$log"; echo "executor_compare.sh: $1"; exit 1; }

# MSCCL++ a02ba3b1's library, configured as compare.sh configures it.
if [ ! -f "$work/prefix/lib/libmscclpp.so" ]; then
  printf '#!/bin/sh\ncase "$1" in --version) echo "git version 2.43.0" ;; *) echo a02ba3b1bdb3 ;; esac\n' >"$work/git"
  chmod +x "$work/git"
  ib=(); [ -f /usr/include/infiniband/verbs.h ] || ib=(-DMSCCLPP_USE_IB=OFF)
  { cmake -S "$ref/mscclpp-a02ba3b1" -B "$work/lib-build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$work/prefix" -DMSCCLPP_BYPASS_GPU_CHECK=ON -DMSCCLPP_USE_CUDA=ON -DMSCCLPP_GPU_ARCHS=90 \
      -DMSCCLPP_BUILD_PYTHON_BINDINGS=OFF -DMSCCLPP_BUILD_APPS_NCCL=OFF -DMSCCLPP_BUILD_TESTS=OFF "${ib[@]}" \
      -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_JSON="$ref/json" -DGIT_EXECUTABLE="$work/git" \
      "-DCMAKE_CXX_FLAGS=-isystem $cuda/include/cccl" &&
    cmake --build "$work/lib-build" -j "$(nproc)" --target mscclpp mscclpp_static &&
    cmake --install "$work/lib-build"; } >>"$log" 2>&1 || fail "building MSCCL++ a02ba3b1 failed"
fi

# Ours: the headers and library of an install prefix, or of a build tree (the public headers of its
# source tree, the generated version.hpp of the build tree).
if [ -f "$ours_in/CMakeCache.txt" ]; then
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$ours_in/CMakeCache.txt")
  ours_inc=(-I"$src/include" -I"$ours_in/include")
  ours_lib=$(dirname "$(find "$ours_in" -name libmscclpp.so -not -path '*/python/*' | head -n 1)")
else
  ours_inc=(-I"$ours_in/include")
  ours_lib=$ours_in/lib
fi
[ -f "$ours_lib/libmscclpp.so" ] || { echo "executor_compare.sh: no libmscclpp.so under $ours_in"; exit 2; }

# The same program against each library. It includes MSCCL++'s internal utils_internal.hpp (for
# Timer), as MSCCL++'s own test build does; against ours, executor_compare/ stands in for it. MSCCL++'s
# library calls the driver API without linking it: the program links it (the toolkit's stub where no
# driver is installed; the driver's own library is loaded at run time).
build_test() {  # name library-dir include-flags...
  local name=$1 lib=$2
  shift 2
  mpicxx -std=c++17 -O2 -o "$work/executor_test_$name" "$ref/exec/executor_test.cc" "$@" -isystem "$cuda/include" \
    -isystem "$cuda/include/cccl" -L"$lib" -Wl,-rpath,"$lib" -lmscclpp -L"$cuda/lib64" -L"$cuda/lib64/stubs" -lcudart -lcuda >>"$log" 2>&1 ||
    fail "building executor_test against $name ($lib) failed"
}
build_test mscclpp "$work/prefix/lib" -I"$ref/mscclpp-a02ba3b1/src/include" -I"$work/prefix/include"
build_test ours "$ours_lib" -I"$here/executor_compare" "${ours_inc[@]}"
# executor_test picks GPU <rank>: with one GPU, the fold adapter maps every ordinal onto GPU 0.
g++ -std=c++17 -O2 -shared -fPIC -o "$work/libexec_fold_gpus.so" "$ref/fold/fold_gpus.cc" -isystem "$cuda/include" \
  -ldl >>"$log" 2>&1 || fail "building the fold adapter failed"

export NCCL_NVLS_ENABLE=0 MSCCLPP_FORCE_DISABLE_NVLS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$here/../../tools/mps.sh" start "$work/mps"
export CUDA_MPS_PIPE_DIRECTORY=$work/mps/pipe CUDA_MPS_LOG_DIRECTORY=$work/mps/log
trap '"$here/../../tools/mps.sh" stop "$work/mps"' EXIT
# shellcheck disable=SC2054  # "self,tcp" is one argument
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 --mca btl self,tcp --mca btl_tcp_if_include lo
  --mca oob_tcp_if_include lo -x LD_PRELOAD="$work/libexec_fold_gpus.so")

raw=$out/executor-compare-raw.txt
: >"$raw"
run() {  # side plan size packet
  local iters=20 graphs=10
  [ "$3" -ge $((16 << 20)) ] && iters=5 graphs=4
  echo "### $1 $2 $3 $4" >>"$raw"
  timeout 120 "${mpi[@]}" "$work/executor_test_$1" "$3" "$ref/exec/$2" "$iters" "$graphs" "$4" >>"$raw" 2>&1
  echo "### rc $?" >>"$raw"
}
configs=()  # "plan size packet"
for m in "${modes[@]}"; do
  case $m in
  headline)
    configs+=("allreduce.json $((1 << 20)) LL16" "allreduce.json $((64 << 20)) LL16"
      "allreduce_packet.json $((1 << 20)) LL16" "allreduce_packet.json $((1 << 20)) LL8") ;;
  sweep | sweep-simple | sweep-ll16 | sweep-ll8)
    for s in 10 12 14 16 18 20 22 24 26 28; do
      [[ $m == sweep || $m == sweep-simple ]] && configs+=("allreduce.json $((1 << s)) LL16")
      [[ $m == sweep || $m == sweep-ll16 ]] && configs+=("allreduce_packet.json $((1 << s)) LL16")
      [[ $m == sweep || $m == sweep-ll8 ]] && configs+=("allreduce_packet.json $((1 << s)) LL8")
    done ;;
  *) echo "executor_compare.sh: unknown mode $m"; exit 2 ;;
  esac
done
for ((r = 0; r < reps; ++r)); do
  for c in "${configs[@]}"; do
    read -r plan size packet <<<"$c"
    run ours "$plan" "$size" "$packet"
    run mscclpp "$plan" "$size" "$packet"
  done
done

python3 - "$raw" >"$out/executor-compare.txt" <<'PY'
import re, statistics, sys
times, fails, order = {}, [], []
cur, ranks = None, []
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if line.startswith("### rc"):
        if f[2] != "0" or len(ranks) < 2:
            fails.append(f"{' '.join(cur)}: exit {f[2]}, {len(ranks)} rank times")
        else:
            key = tuple(cur[1:])
            if key not in order:
                order.append(key)
            times.setdefault((cur[0],) + key, []).append(max(ranks))
        continue
    if line.startswith("### "):
        cur, ranks = f[1:], []
        continue
    m = re.match(r"Rank \d+: \d+ bytes ([0-9.eE+-]+) us", line.strip())
    if m:
        ranks.append(float(m.group(1)))
print(f"{'plan':24s} {'packet':6s} {'size_B':>10s} {'ours_us':>9s} {'mscclpp_us':>10s} {'ours/mscclpp':>12s}  runs")
for key in order:
    o, r = times.get(("ours",) + key, []), times.get(("mscclpp",) + key, [])
    if not o or not r:
        continue
    mo, mr = statistics.median(o), statistics.median(r)
    print(f"{key[0]:24s} {key[2]:6s} {int(key[1]):>10d} {mo:9.2f} {mr:10.2f} {mo / mr:12.2f}  {len(o)}/{len(r)}")
print("medians of each side's runs; a run's time is its slowest rank's")
for f in fails:
    print("FAILED:", f)
PY
cat "$out/executor-compare.txt"
