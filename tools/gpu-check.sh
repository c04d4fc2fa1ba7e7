#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Validation on a GPU machine: builds, runs every test (GPU tests included; the multi-process suites
# with 2 and 4 ranks on the GPUs present, under a private MPS daemon when ranks share a GPU), and
# writes logs and the summary line under <out dir>.
#   gpu-check.sh <out dir> [build|test|coll-tests|coll-matrix|conformance|bench|consumers|nccl-tests|
#                           nccl-registration|coll-bench|compare|executor-compare|sanitize|sanitize-mp|sanitize-coll]...
#   (default: build test)
# compare and executor-compare measure against MSCCL++ a02ba3b1 built from the reference copy in
# $REFERENCE_DIR (default .reference, what /work/shared/reference holds, plus exec/ for the executor; see
# test/bench/compare_medians.sh and executor_compare.sh): the collectives as medians of 3 compare.sh
# runs, the executor on MSCCL++'s own plans.
# nccl-tests builds NVIDIA's nccl-tests from the source copy in $NCCL_TESTS_SRC (default .nccl-tests, which
# test/nccl/run_nccl_tests.sh says how to make) against an install of the build, and runs them;
# nccl-registration runs the two that registration changes, checked and then timed with and without it.
# The transport conformance suite runs within `test` (ctest's mp_unit_tests_np2/np4); `conformance`
# runs it alone with 2 and 4 ranks and lists each kind's result. Its IB rows use the verbs library in
# MSCCLPP_IBV_SO, by default the substitute provider of the build (GPU memory through DMA-BUF where the
# driver offers it, else peer memory, which the substitute is told to allow).
# Never enables NVLS: NCCL_NVLS_ENABLE=0 is exported and nothing here creates multicast objects.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?out dir}" && cd "$1" && pwd)
shift
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build test)
build=${MSCCLPP_BUILD_DIR:-$root/build-gpu}
export NCCL_NVLS_ENABLE=0
jobs=$(nproc)

# memcheck_2_ranks <log name> <seconds> <gtest filter>: mp_unit_tests as 2 ranks under a private MPS
# daemon, each rank under compute-sanitizer memcheck; prints the exit status and the error summaries.
memcheck_2_ranks() {
  local log=$out/$1.log mps=$build/mps-$1
  "$root/tools/mps.sh" start "$mps"
  CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log timeout "$2" \
    "$root/test/mp_unit/run_mpi.sh" 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
    "$build/test/mp_unit_tests" --gtest_filter="$3" >"$log" 2>&1
  echo "$1 (2 ranks) exit: $?"
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$log" | sort | uniq -c
  "$root/tools/mps.sh" stop "$mps"
}

for step in "${steps[@]}"; do
  case $step in
  build)
    nvidia-smi >"$out/nvidia-smi.txt" 2>&1
    start=$(date +%s)
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/configure.log" 2>&1 &&
      cmake --build "$build" -j "$jobs" >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
    echo "build: $(($(date +%s) - start)) s"
    ;;
  test)
    rm -rf "$build/test-results" "$build/Testing/Temporary/LastTestsFailed.log"
    start=$(date +%s)
    ctest --test-dir "$build" -j 8 --output-on-failure --timeout 600 >"$out/ctest.log" 2>&1
    echo "ctest: $(($(date +%s) - start)) s"
    grep -E "tests passed|tests failed" "$out/ctest.log"
    python3 "$root/tools/summarize_tests.py" "$build/test-results" "$build/Testing/Temporary/LastTestsFailed.log" |
      tee "$out/summary.txt"
    ;;
  coll-tests)
    # The collectives' and the executor's multi-process suites, and the NCCL API's, at 2, 3 and 4 ranks,
    # each with capture-time registration turned off and on (MSCCLPP_COLL_CAPTURE_CACHE 0 and 256: the
    # setting is read once per process, so one run covers one value); needs the build step first.
    # One line per run: its exit status and its gtest totals, then the names of its failed tests.
    mps=$build/mps-coll-tests
    "$root/tools/mps.sh" start "$mps"
    for cache in 0 256; do
      for np in 2 3 4; do
        for suite in mp_unit_tests nccl_mp_tests; do
          binary=$build/test/$suite filter=()
          [ $suite = nccl_mp_tests ] && binary=$build/test/nccl/$suite
          [ $suite = mp_unit_tests ] && filter=(--gtest_filter='CollectivesMpTest.*:CollectivesCaptureMpTest.*:*Executor*')
          log=$out/coll-tests-$suite-cache$cache-np$np.log
          GTEST_COLOR=no MSCCLPP_COLL_CAPTURE_CACHE=$cache MSCCLPP_BOOTSTRAP_TIMEOUT=60 \
            CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log timeout 300 \
            "$root/test/mp_unit/run_mpi.sh" $np "$binary" "${filter[@]}" >"$log" 2>&1
          echo "$suite (capture cache $cache, $np ranks) exit: $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$log" |
            sort | uniq -c | tr -s ' \n' ' ')"
          grep -E '^\[  FAILED  \] [A-Za-z]' "$log" | sed 's/ (.*//' | sort -u
        done
      done
    done
    "$root/tools/mps.sh" stop "$mps"
    ;;
  coll-matrix)
    # The collectives matrix (every collective, type, op, size class, in and out of place, each forced
    # path) at 2, 3 and 4 ranks; ctest's mp_unit_tests entries run it at 2 and 4 only. About 4 min at 4
    # ranks on one H100. One line per rank count: exit status, totals, then the failed cases' names.
    mps=$build/mps-coll-matrix
    "$root/tools/mps.sh" start "$mps"
    for np in 2 3 4; do
      log=$out/coll-matrix-np$np.log
      GTEST_COLOR=no MSCCLPP_BOOTSTRAP_TIMEOUT=60 CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log \
        timeout 900 "$root/test/mp_unit/run_mpi.sh" $np "$build/test/mp_unit_tests" --gtest_filter='Collectives/*' \
        >"$log" 2>&1
      echo "coll-matrix ($np ranks) exit: $? $(grep -E '^\[  (PASSED|FAILED) +\] [0-9]+ tests?' "$log" |
        sort | uniq -c | tr -s ' \n' ' ')"
      grep -E '^\[  FAILED  \] [A-Za-z]' "$log" | sed 's/ (.*//; s/, where GetParam.*//' | sort -u
    done
    "$root/tools/mps.sh" stop "$mps"
    ;;
  conformance)
    mps=$build/mps-conformance
    "$root/tools/mps.sh" start "$mps"
    ibv=${MSCCLPP_IBV_SO:-$build/test/ib_substitute/libmscclpp_ibv_substitute.so}
    for np in 2 4; do
      MSCCLPP_IBV_SO=$ibv MSCCLPP_IBV_SUBSTITUTE_PEERMEM=1 \
        CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log timeout 600 \
        "$root/test/mp_unit/run_mpi.sh" $np "$build/test/mp_unit_tests" --gtest_filter='TransportConformance*' \
        >"$out/conformance-np$np.log" 2>&1
      echo "conformance ($np ranks) exit: $?"
      grep -E "^\[ +(OK|FAILED|SKIPPED) +\] TransportConformance" "$out/conformance-np$np.log" | sort | uniq -c
    done
    "$root/tools/mps.sh" stop "$mps"
    ;;
  bench)
    mps=$build/mps-bench
    "$root/tools/mps.sh" start "$mps"
    CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log \
      "$root/test/mp_unit/run_mpi.sh" 2 "$build/test/bench/mscclpp-bench" >"$out/bench.txt" 2>&1
    echo "bench exit: $?"
    "$root/tools/mps.sh" stop "$mps"
    ;;
  sanitize)
    # memcheck, then racecheck, over the single-process GPU tests (compute-sanitizer does not attach to
    # MPS clients).
    # The tests that make kernels trap on purpose are left out: the trap is their expected outcome.
    # API errors are not reported: several tests provoke them on purpose to check error paths.
    timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
      "$build/test/unit_tests" --gtest_filter='Gpu*:Device*:TokenPool*:GpuIpc*:ContextMemory*:FifoTest*:ProxyTest*-DevicePoll*' \
      >"$out/memcheck.log" 2>&1
    echo "memcheck exit: $?"
    tail -n 5 "$out/memcheck.log"
    # racecheck (shared-memory hazards) over the same tests.
    timeout 300 compute-sanitizer --tool racecheck --report-api-errors no --error-exitcode 1 \
      "$build/test/unit_tests" --gtest_filter='Gpu*:Device*:TokenPool*:GpuIpc*:ContextMemory*:FifoTest*:ProxyTest*-DevicePoll*' \
      >"$out/racecheck.log" 2>&1
    echo "racecheck exit: $?"
    tail -n 2 "$out/racecheck.log"
    ;;
  sanitize-mp)
    # memcheck over the multi-process GPU suites with 2 ranks under MPS, the 100,000-round ping-pongs
    # and 256 MiB transfers included (about 10 s instrumented on an H200).
    memcheck_2_ranks memcheck-mp 240 'DataPlane*:GpuIpcMemMp*'
    ;;
  sanitize-coll)
    # memcheck over the collectives' and the executor's multi-process suites with 2 ranks under MPS:
    # every collective kernel (LL one- and two-shot, staged, pairwise, zero-copy, the copy engines'
    # barriers) and the interpreter, on registered, unregistered and capture-registered buffers.
    # Instrumented kernels are slower and the matrix is long, hence its own step and time limit.
    memcheck_2_ranks memcheck-coll 600 'CollectivesMpTest.*:CollectivesCaptureMpTest.*:*Executor*'
    ;;
  consumers)
    # The NCCL API's real consumers (torch.distributed, a vLLM-style client) and its benchmark against the
    # C++ collectives, 2 and 4 ranks sharing the GPUs under MPS.
    "$root/test/nccl/run_consumers.sh" "$build" >"$out/consumers.log" 2>&1
    echo "consumers exit: $?"
    grep -E "^== |FAILED|passed, .* failed" "$out/consumers.log"
    mps=$build/mps-nccl-bench
    "$root/tools/mps.sh" start "$mps"
    for np in 2 4; do
      CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log timeout 300 \
        "$root/test/mp_unit/run_mpi.sh" $np "$build/test/nccl/nccl_bench" >"$out/nccl-bench-np$np.txt" 2>&1
      echo "nccl_bench ($np ranks) exit: $?"
    done
    "$root/tools/mps.sh" stop "$mps"
    ;;
  nccl-tests | nccl-registration)
    # nccl-tests: every nccl-tests binary at 2, 3 and 4 ranks in six modes, against the NCCL home of an
    # install of this build (test/nccl/run_nccl_tests.sh). nccl-registration: all_reduce and all_gather
    # checked with -R 2 at 2 and 4 ranks the same way, then timed with -R 2 against -R 0
    # (test/nccl/registration_timing.sh). Both need the build step first.
    src=${NCCL_TESTS_SRC:-$root/.nccl-tests}
    if [ ! -f "$src/src/Makefile" ]; then
      echo "$step: skipped: no nccl-tests source copy at $src (set NCCL_TESTS_SRC; see test/nccl/run_nccl_tests.sh)"
      continue
    fi
    prefix=$build/install-nccl-tests
    rm -rf "$prefix"
    cmake --install "$build" --prefix "$prefix" >"$out/$step-install.log" 2>&1 ||
      { tail -n 20 "$out/$step-install.log"; echo "$step: installing the build failed"; continue; }
    # The nccl-tests build and the run logs stay in the build tree, so a later call (a part of the
    # matrix through RUN_NCCL_TESTS_RANKS / RUN_NCCL_TESTS_MODES) reuses the build; the logs come here.
    start=$(date +%s)
    part=()
    [ "$step" = nccl-registration ] &&
      part=(RUN_NCCL_TESTS_RANKS="2 4" RUN_NCCL_TESTS_MODES=symmetric RUN_NCCL_TESTS_BINARIES="all_reduce all_gather")
    env "${part[@]}" "$root/test/nccl/run_nccl_tests.sh" "$prefix" "$src" "$build/nccl-tests" >"$out/$step.txt" 2>&1
    echo "$step exit: $? ($(($(date +%s) - start)) s)"
    rm -rf "$out/$step-logs"
    cp -r "$build/nccl-tests/logs" "$out/$step-logs" 2>/dev/null
    grep -E "FAILED|passed, .* failed" "$out/$step.txt"
    if [ "$step" = nccl-registration ]; then
      home=$(find "$prefix" -maxdepth 3 -type d -name mscclpp_nccl -path "$prefix/lib*" | head -n 1)
      start=$(date +%s)
      "$root/test/nccl/registration_timing.sh" "$build/nccl-tests/build" "$home" "$build/registration-timing" \
        >"$out/registration-timing.txt" 2>&1
      echo "registration timing exit: $? ($(($(date +%s) - start)) s)"
      grep -E "worst ratio|FAILED" "$out/registration-timing.txt"
    fi
    ;;
  coll-bench)
    # Every collective, eager and as a CUDA graph, with the floor measured in the same run.
    mps=$build/mps-coll-bench
    "$root/tools/mps.sh" start "$mps"
    coll_bench() { # <log name> <ranks> <bench arguments>...
      local name=$1 np=$2
      shift 2
      CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log timeout 300 \
        "$root/test/mp_unit/run_mpi.sh" "$np" "$build/test/bench/mscclpp-coll-bench" "$@" >"$out/$name.txt" 2>&1
      echo "$name exit: $?"
    }
    coll_bench coll-bench-np2 2 -C all -b 8 -e 64M -f 2 -n 20 -w 5 -c 1
    coll_bench coll-bench-np2-graph 2 -C all -b 8 -e 64M -f 2 -n 20 -w 5 -c 1 -G 10
    coll_bench coll-bench-np4-graph 4 -C allreduce -b 8 -e 64M -f 2 -n 20 -w 5 -c 1 -G 10
    "$root/tools/mps.sh" stop "$mps"
    ;;
  compare)
    start=$(date +%s)
    "$root/test/bench/compare_medians.sh" "${REFERENCE_DIR:-$root/.reference}" "$build/test/bench/mscclpp-coll-bench" \
      "$out/compare" 3 >"$out/compare.txt" 2>&1
    echo "compare exit: $? ($(($(date +%s) - start)) s)"
    grep -E "^run |worst ratio|FAILED" "$out/compare.txt"
    ;;
  executor-compare)
    start=$(date +%s)
    "$root/test/bench/executor_compare.sh" "${REFERENCE_DIR:-$root/.reference}" "$build" "$out/executor-compare" \
      headline >"$out/executor-compare.txt" 2>&1
    echo "executor-compare exit: $? ($(($(date +%s) - start)) s)"
    tail -n 8 "$out/executor-compare.txt"
    ;;
  *)
    echo "unknown step $step" >&2
    exit 2
    ;;
  esac
done
