#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# NVIDIA's nccl-tests, unchanged, against an install's NCCL home: builds them (MPI=1) from a source copy
# the caller supplies, then runs every binary at 2, 3 and 4 ranks on the GPUs present, in each mode below,
# with data checks on (-c 1). Prints one line per run and ends with "N passed, N failed, N skipped" (a
# skipped run is one nccl-tests declines by itself, such as hypercube at 3 ranks).
#   test/nccl/run_nccl_tests.sh <install prefix> <nccl-tests source copy> <out dir>
#
# The source copy is not part of this tree. From the mirror of NVIDIA/nccl-tests, tag v2.19.6:
#   mkdir -p .nccl-tests && git -C <mirror> archive v2.19.6 | tar -x -C .nccl-tests
# (.nccl-tests/ is git-ignored). The copy is only read: objects and binaries go to <out dir>/build.
#
# A run passes when it exits 0, prints at least one result row, every row's #wrong is 0 (none "N/A",
# except the in-place column of alltoall, alltoallv and sendrecv, which nccl-tests never checks),
# nccl-tests reports "Out of bounds values : 0 OK", the header and library versions it reports are
# those of our nccl.h, and no line of its output (every rank's stdout and stderr, our library logging at
# WARN) says WARN or ERROR.
#
# Ranks: rank r uses GPU (local rank r mod GPUs) through NCCL_TESTS_DEVICE, so with one GPU every rank
# shares GPU 0; a private MPS daemon (tools/mps.sh) serves them. NVLS stays off (NCCL_NVLS_ENABLE=0).
# NVCC_GENCODE (nccl-tests' variable) defaults to the first GPU's architecture, sm_90 without a GPU.
# Without a GPU the script builds and checks the build, and runs nothing.
# RUN_NCCL_TESTS_RANKS (default "2 3 4") and RUN_NCCL_TESTS_MODES (default every mode: "default graph
# alltypes register symmetric unaligned") and RUN_NCCL_TESTS_BINARIES (default every binary; names
# as in "all_reduce reduce_scatter") run a part of the matrix, to split it over several sessions;
# a second call with the same <out dir> reuses the nccl-tests build (make is incremental).
# RUN_NCCL_TESTS_JOBS (default 1) runs that many at once on the same GPUs and MPS daemon: the matrix is
# about 200 runs of a few seconds each, mostly process start and communicator setup, so a few at once
# cut its time without changing what each checks. Its bandwidth column is then not a measurement.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$(cd "${1:?install prefix}" && pwd) || exit 2
src=$(cd "${2:?nccl-tests source copy}" && pwd) || exit 2
out=$(mkdir -p "${3:?out dir}" && cd "$3" && pwd) || exit 2

home=$(find "$prefix" -maxdepth 3 -type d -name mscclpp_nccl -path "$prefix/lib*" | head -n 1)
if [ -z "$home" ] || [ ! -e "$home/lib/libnccl.so.2" ] || [ ! -f "$home/include/nccl.h" ]; then
  echo "run_nccl_tests: no NCCL home (<libdir>/mscclpp_nccl with include/nccl.h, lib/libnccl.so.2) under $prefix"
  exit 2
fi
[ -f "$src/src/Makefile" ] || { echo "run_nccl_tests: $src is not an nccl-tests source tree (no src/Makefile)"; exit 2; }
our_version=$(sed -n 's/^#define NCCL_VERSION_CODE \([0-9]*\).*/\1/p' "$home/include/nccl.h")

# ---- build ----
cuda_home=${CUDA_HOME:-/usr/local/cuda}
mpi_home=""
for dir in $(mpicc --showme:incdirs 2>/dev/null); do
  [ -f "$dir/mpi.h" ] && [ -z "$mpi_home" ] && mpi_home=$(dirname "$dir")
done
[ -n "$mpi_home" ] || { echo "run_nccl_tests: no MPI found (mpicc --showme:incdirs names no mpi.h)"; exit 2; }
gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
if [ -z "${NVCC_GENCODE:-}" ]; then
  arch=90
  [ "$gpus" -gt 0 ] && arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '.')
  NVCC_GENCODE="-gencode=arch=compute_$arch,code=sm_$arch"
fi
build=$out/build
echo "building nccl-tests from $src against $home ($NVCC_GENCODE, MPI at $mpi_home)"
if ! make -C "$src/src" -j "$(nproc)" MPI=1 MPI_HOME="$mpi_home" CUDA_HOME="$cuda_home" NCCL_HOME="$home" \
  NVCC_GENCODE="$NVCC_GENCODE" BUILDDIR="$build" >"$out/build.log" 2>&1; then
  tail -n 30 "$out/build.log"
  echo "run_nccl_tests: the nccl-tests build failed (log: $out/build.log)"
  exit 1
fi
mapfile -t binaries < <(find "$build" -maxdepth 1 -type f -name '*_perf' -perm -u+x | sort)
[ ${#binaries[@]} -gt 0 ] || { echo "run_nccl_tests: the build made no *_perf binary"; exit 1; }
export LD_LIBRARY_PATH=$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for bin in "${binaries[@]}"; do
  resolved=$(ldd "$bin" | sed -n 's/^\s*libnccl.so.2 => \(\S*\) .*/\1/p')
  if [ "$resolved" != "$home/lib/libnccl.so.2" ]; then
    echo "run_nccl_tests: $bin loads libnccl.so.2 from '$resolved', not from $home/lib"
    exit 1
  fi
done
echo "built ${#binaries[@]} binaries; each loads $home/lib/libnccl.so.2"
if [ "$gpus" -eq 0 ]; then
  echo "run_nccl_tests: no GPU here; nothing run"
  exit 0
fi

# ---- run ----
# Sizes: 8 B to 128 MiB by 4x in the default mode covers our collectives' packet (LL) range (up to
# 512 KiB), the staged range, and transfers larger than the staging scratch (64 MiB), which take several
# rounds. The other modes stop at 16 MiB: they change how buffers are registered or launched, not the
# algorithm ranges, and the 11 binaries x 3 rank counts x 6 modes must finish in a few minutes on one
# GPU. -d all -o all runs every type and operator at one odd size, 1000001 bytes.
modes=(
  "default|-b 8 -e 128M -f 4"
  "graph|-b 8 -e 16M -f 4 -G 10"
  "alltypes|-b 1000001 -e 1000001 -d all -o all"
  "register|-b 8 -e 16M -f 4 -R 1"
  "symmetric|-b 8 -e 16M -f 4 -R 2"
  "unaligned|-b 8 -e 16M -f 4 -u 1"
)
mps=$out/mps
"$root/tools/mps.sh" start "$mps" >/dev/null
trap '"$root/tools/mps.sh" stop "$mps" >/dev/null' EXIT
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log NCCL_NVLS_ENABLE=0 MSCCLPP_LOG_LEVEL=WARN
export RUN_NCCL_TESTS_GPUS=$gpus
mkdir -p "$out/logs"

# Reads one run's log; prints "rows wrong unchecked oob avgbw headers library".
summarize() { # <log> <1 when the binary never checks its in-place result>
  awk -v in_place_unchecked_by_design="${2:-0}" '
    /^# nccl-tests version/ {
      for (i = 1; i <= NF; ++i) {
        if ($i ~ /^nccl-headers=/) { split($i, kv, "="); headers = kv[2] }
        if ($i ~ /^nccl-library=/) { split($i, kv, "="); library = kv[2] }
      }
    }
    /^# *Out of bounds values *:/ { line = $0; sub(/.*: */, "", line); split(line, w, " "); oob = w[1] " " w[2] }
    /^# *Avg bus bandwidth *:/ { line = $0; sub(/.*: */, "", line); split(line, w, " "); avg = w[1] }
    /^#/ { next }
    # A result row: size count type [redop] root, then (time algbw busbw #wrong) out of place and in
    # place. Read from the right: binaries without a reduction (hypercube) leave the redop column empty,
    # so counting from the left would read a time as #wrong.
    NF >= 12 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
      ++rows
      out_of_place = $(NF - 4); in_place = $NF
      if (out_of_place ~ /^[0-9]+(\.[0-9]+)?(e\+?[0-9]+)?$/) wrong += out_of_place; else ++unchecked
      if (in_place ~ /^[0-9]+(\.[0-9]+)?(e\+?[0-9]+)?$/) wrong += in_place
      else if (!in_place_unchecked_by_design) ++unchecked
    }
    END {
      gsub(/ /, "_", oob)
      printf "%d %d %d %s %s %s %s\n", rows, wrong, unchecked, oob == "" ? "none" : oob, avg == "" ? "-" : avg,
             headers == "" ? "-" : headers, library == "" ? "-" : library
    }' "$1"
}

read -r -a rank_counts <<<"${RUN_NCCL_TESTS_RANKS:-2 3 4}"
wanted_modes=" ${RUN_NCCL_TESTS_MODES:-default graph alltypes register symmetric unaligned} "
wanted_binaries=" ${RUN_NCCL_TESTS_BINARIES:-} "
jobs=${RUN_NCCL_TESTS_JOBS:-1}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run_nccl_tests: RUN_NCCL_TESTS_JOBS must be a positive integer, got '$jobs'"; exit 2; }

# The runs, in the order they are reported: "<binary> <ranks> <mode index>".
runs=()
for bin in "${binaries[@]}"; do
  name=$(basename "$bin")
  [ -z "${RUN_NCCL_TESTS_BINARIES:-}" ] || [[ $wanted_binaries == *" ${name%_perf} "* ]] || continue
  for np in "${rank_counts[@]}"; do
    for m in "${!modes[@]}"; do
      [[ $wanted_modes == *" ${modes[m]%%|*} "* ]] && runs+=("$bin $np $m")
    done
  done
done

log_of() { echo "$out/logs/$(basename "$1")-np$2-${modes[$3]%%|*}.log"; }

run_one() { # <binary> <ranks> <mode index>: writes the log and, next to it, the exit status
  local log args
  log=$(log_of "$@")
  read -r -a args <<<"${modes[$3]#*|}"
  # shellcheck disable=SC2016 # expanded by each rank's shell
  timeout 300 "$root/test/mp_unit/run_mpi.sh" "$2" bash -c \
    'NCCL_TESTS_DEVICE=$(( ${OMPI_COMM_WORLD_LOCAL_RANK:-0} % RUN_NCCL_TESTS_GPUS )) exec "$0" "$@"' \
    "$1" -g 1 -c 1 "${args[@]}" >"$log" 2>&1
  echo $? >"$log.rc"
}

judge() { # <binary> <ranks> <mode index>: prints the run's line and counts it
  local name log rc by_design rows wrong unchecked oob avg headers library warns declined verdict
  name=$(basename "$1")
  log=$(log_of "$@")
  rc=$(cat "$log.rc" 2>/dev/null || echo 255)
  # alltoall, alltoallv and sendrecv have no in-place form: nccl-tests prints N/A there for every
  # library (reportErrors = !in_place in their sources), so only their out-of-place column is checked.
  by_design=0
  case $name in alltoall_perf | alltoallv_perf | sendrecv_perf) by_design=1 ;; esac
  read -r rows wrong unchecked oob avg headers library <<<"$(summarize "$log" "$by_design")"
  warns=$(grep -cE "WARN|ERROR" "$log")
  local problems=()
  [ "$rc" -eq 0 ] || problems+=("exit $rc")
  [ "$rows" -gt 0 ] || problems+=("no result rows")
  [ "$wrong" -eq 0 ] || problems+=("$wrong wrong")
  [ "$unchecked" -eq 0 ] || problems+=("$unchecked unchecked")
  [ "$oob" = "0_OK" ] || problems+=("out of bounds: $oob")
  [ "$headers" = "$our_version" ] && [ "$library" = "$our_version" ] ||
    problems+=("versions: headers $headers, library $library, ours $our_version")
  [ "$warns" -eq 0 ] || problems+=("$warns WARN/ERROR line(s)")
  declined=$(grep -m 1 -E "skipping$" "$log")
  if [ "$rc" -eq 0 ] && [ "$rows" -eq 0 ] && [ -n "$declined" ] && [ "$warns" -eq 0 ]; then
    # nccl-tests itself declines some shapes (hypercube needs a power-of-two rank count).
    verdict="skipped by nccl-tests: $declined"
    skipped=$((skipped + 1))
  elif [ ${#problems[@]} -eq 0 ]; then
    verdict=ok
    passed=$((passed + 1))
  else
    verdict="FAILED ($(printf '%s, ' "${problems[@]}")log: $log)"
    failed=$((failed + 1))
  fi
  printf "%-22s np=%d %-9s exit=%-3d rows=%-4d #wrong=%-4s busbw=%-8s %s\n" \
    "$name" "$2" "${modes[$3]%%|*}" "$rc" "$rows" "$wrong" "$avg" "$verdict"
}

passed=0
failed=0
skipped=0
if [ "$jobs" -eq 1 ]; then
  for r in "${runs[@]}"; do
    # shellcheck disable=SC2086 # the three words of a run
    run_one $r
    # shellcheck disable=SC2086
    judge $r
  done
else
  # Started in order, at most $jobs at a time; reported in order once all have ended.
  for r in "${runs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # shellcheck disable=SC2086
    run_one $r &
  done
  wait
  for r in "${runs[@]}"; do
    # shellcheck disable=SC2086
    judge $r
  done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
