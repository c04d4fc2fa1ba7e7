#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# The README's test command: installs what is missing (tools/install-deps.sh), builds, checks the formatting
# (skipped without clang-format) and that the library compiles with hipcc (tools/hip-check.sh), runs every test
# (unit, multi-process suites under mpirun with 2 and 4 ranks, the install check, a benchmark smoke run), then the
# host tests again under ASan/UBSan, and ends with one line "N passed, N failed, N skipped".
# GPU tests skip, with the reason, where there is no GPU.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MSCCLPP_BUILD_DIR:-$root/build}
san_build=${MSCCLPP_SAN_BUILD_DIR:-$root/build-sanitize}
results=$build/test-results
jobs=$(nproc)

"$root/tools/install-deps.sh" test || exit 1
MSCCLPP_BUILD_DIR=$build "$root/tools/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo || exit 1

rm -rf "$results"
mkdir -p "$results"
extra_failures=0
extra_skipped=0

echo "== formatting (clang-format) =="
if command -v clang-format >/dev/null 2>&1; then
  "$root/tools/format.sh" --check || extra_failures=$((extra_failures + 1))
else
  echo "skipped: clang-format not found"
  extra_skipped=$((extra_skipped + 1))
fi

echo "== HIP compile check (hipcc, gfx90a) =="
# hip-check.sh installs hipcc with apt-get; without either there is nothing to check with.
if command -v hipcc >/dev/null 2>&1 || command -v apt-get >/dev/null 2>&1; then
  "$root/tools/hip-check.sh" || extra_failures=$((extra_failures + 1))
else
  echo "skipped: hipcc not found and no apt-get to install it"
  extra_skipped=$((extra_skipped + 1))
fi

echo "== ctest (unit, multi-process, install) =="
rm -f "$build/Testing/Temporary/LastTestsFailed.log"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 900 2>&1 | tee "$build/ctest.log"

echo "== benchmark smoke run (2 ranks, --quick) =="
if ! "$root/test/mp_unit/run_mpi.sh" 2 "$build/test/bench/mscclpp-bench" --quick >"$build/bench-smoke.log" 2>&1; then
  cat "$build/bench-smoke.log"
  echo "benchmark smoke run failed"
  extra_failures=$((extra_failures + 1))
fi

echo "== host tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
# Only the unit tests are built here: they hold the host logic (parsers, deserializers, allocators). The
# sanitizers instrument host code only, so the kernels are built as unoptimized PTX (no ptxas, cicc at -O0):
# a quarter of their optimized compile time, and still loadable (JIT) where this runs on a GPU.
if MSCCLPP_BUILD_DIR=$san_build MSCCLPP_BUILD_TARGET=unit_tests "$root/tools/build.sh" -DCMAKE_BUILD_TYPE=Debug \
  -DMSCCLPP_SANITIZE=address,undefined -DMSCCLPP_GPU_ARCHS=90-virtual "-DCMAKE_CUDA_FLAGS=-Xcicc -O0" \
  >"$san_build.log" 2>&1; then
  mkdir -p "$results/sanitize"
  # protect_shadow_gap=0: the CUDA runtime maps memory where ASan keeps its shadow gap.
  ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$san_build/test/unit_tests" --gtest_output="xml:$results/sanitize/unit_tests.xml" >"$san_build/unit.log" 2>&1 ||
    { tail -n 60 "$san_build/unit.log"; echo "sanitizer run of unit_tests failed"; }
  grep -q "ERROR: AddressSanitizer\|runtime error:" "$san_build/unit.log" &&
    { grep -A5 "ERROR: AddressSanitizer\|runtime error:" "$san_build/unit.log" | head -40; extra_failures=$((extra_failures + 1)); }
else
  tail -n 40 "$san_build.log"
  echo "sanitizer build failed"
  extra_failures=$((extra_failures + 1))
fi

echo "== summary =="
python3 "$root/tools/summarize_tests.py" "$results" "$build/Testing/Temporary/LastTestsFailed.log" "$extra_failures" \
  "$extra_skipped"
