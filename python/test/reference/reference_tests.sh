#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# MSCCL++ a02ba3b1's own Python tests (python/test/test_mscclpp.py), unchanged, against this project's
# module. The tests are not part of the project: the caller supplies MSCCL++'s sources and this script
# keeps a copy in a git-ignored folder (default <repo>/.reference-python).
#
#   reference_tests.sh prepare <mscclpp git dir or checkout> [copy]
#       copies python/test/ and test/execution-files/ (the plans test_executor reads) at a02ba3b1
#   reference_tests.sh build <build dir> [copy]
#       builds the test's helper extension `_ext` into the copy: MSCCL++ writes it with nanobind, this
#       project's module is pybind11, so proxy_test_ext.cpp (a pybind11 equivalent) replaces the copy's
#       _cpp/proxy_test.cpp; that is the copy's only change
#   reference_tests.sh run <build dir> <ranks> [copy] [pytest arguments...]
#       runs test_mscclpp.py as <ranks> MPI ranks on this host (every rank on GPU 0 where there is one GPU,
#       under a private MPS daemon unless one serves <build dir>/mps already) and prints
#       "N passed, N failed, N skipped" and the reasons for skips
#   reference_tests.sh ctest <build dir> <ranks> [copy]
#       build, then run; exits 77 (skipped), saying why, where there is no copy, no GPU or no cupy
#
# ranks_plugin.py (loaded with -p) picks the GPUs and skips the InfiniBand cases where the machine has no
# IB device; NVLS cases skip themselves where NVLS is missing (is_nvls_supported()).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
commit=a02ba3b1bdb3ba65dcabb8cff0fa0515cbd750df
# The interpreter that runs the tests and builds the helper: $PYTHON, else the one the build's module was
# made for (set in build_python once the build dir is known).
python=${PYTHON:-}

build_python() {
  [ -n "$python" ] && return
  python=$(sed -n 's/^_\{0,1\}Python_EXECUTABLE:[A-Z]*=//p' "$1/CMakeCache.txt" | head -n 1)
  python=${python:-python3}
}

usage() {
  sed -n '/^#   reference_tests.sh/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

prepare() {
  local source=${1:?MSCCL++ git dir or checkout}
  local copy=${2:-$root/.reference-python}
  rm -rf "$copy"
  mkdir -p "$copy"
  if git --git-dir="$source" rev-parse --verify -q "$commit^{commit}" >/dev/null 2>&1; then
    git --git-dir="$source" archive "$commit" python/test test/execution-files | tar -x -C "$copy"
  elif git -C "$source" rev-parse --verify -q "$commit^{commit}" >/dev/null 2>&1; then
    git -C "$source" archive "$commit" python/test test/execution-files | tar -x -C "$copy"
  elif [ -f "$source/python/test/test_mscclpp.py" ] && [ -d "$source/test/execution-files" ]; then
    mkdir -p "$copy/python" "$copy/test"
    cp -r "$source/python/test" "$copy/python/test"
    cp -r "$source/test/execution-files" "$copy/test/execution-files"
  else
    echo "prepare: $source holds neither commit $commit nor python/test and test/execution-files" >&2
    exit 1
  fi
  echo "prepare: MSCCL++ python/test and test/execution-files in $copy"
}

build_ext() {
  local build=${1:?build dir}
  local copy=${2:-$root/.reference-python}
  local cpp=$copy/python/test/_cpp
  build_python "$build"
  [ -d "$cpp" ] || { echo "build: $cpp is missing; run prepare first" >&2; exit 1; }
  [ -f "$build/src/libmscclpp.so" ] || { echo "build: $build/src/libmscclpp.so is missing" >&2; exit 1; }
  cp "$here/proxy_test_ext.cpp" "$cpp/proxy_test.cpp"
  local cuda=${CUDA_HOME:-/usr/local/cuda}
  # The pybind11 headers the build's _mscclpp was compiled with: two modules share their types only when
  # built against the same pybind11.
  local cached dir includes=() dirs=()
  cached=$(sed -n 's/^pybind11_INCLUDE_DIRS:INTERNAL=//p' "$build/CMakeCache.txt")
  [ -n "$cached" ] || { echo "build: $build/CMakeCache.txt names no pybind11 (was the module built?)" >&2; exit 1; }
  IFS=';' read -r -a dirs <<<"$cached"
  for dir in "${dirs[@]}"; do includes+=("-I$dir"); done
  local suffix
  suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  ${CXX:-c++} -std=c++17 -O2 -shared -fPIC -Wall -Wextra "${includes[@]}" \
    -I"$root/include" -I"$build/include" -I"$cuda/include" "$cpp/proxy_test.cpp" \
    -L"$build/src" -lmscclpp -Wl,-rpath,"$build/src" -o "$cpp/_ext$suffix"
  echo "build: $cpp/_ext$suffix"
}

# One rank: pytest with its junit report in $results; rank 0 prints its report, the others only on failure.
rank() {
  local results=$1
  shift
  local rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
  # No ini file: this project's pyproject.toml would otherwise configure the copy's run.
  local args=(-c /dev/null --rootdir . -p ranks_plugin -p no:cacheprovider -rs "--junitxml=$results/rank$rank.xml" "$@")
  if [ "$rank" = 0 ]; then
    exec "$python" -m pytest "${args[@]}"
  fi
  local log status=0
  log=$(mktemp)
  "$python" -m pytest "${args[@]}" >"$log" 2>&1 || status=$?
  [ "$status" -ne 0 ] && sed "s/^/[rank $rank] /" "$log"
  rm -f "$log"
  exit "$status"
}

run() {
  local build=${1:?build dir}
  local ranks=${2:?rank count}
  local copy=${3:-$root/.reference-python}
  shift 3 || shift $#
  build=$(cd "$build" && pwd)
  copy=$(cd "$copy" && pwd)
  local tests=$copy/python/test/test_mscclpp.py
  build_python "$build"
  export PYTHON=$python  # for the ranks, started by mpirun
  [ -f "$tests" ] || { echo "run: $tests is missing; run prepare and build first" >&2; exit 1; }
  local pythonpath=$build/python:$here${PYTHONPATH:+:$PYTHONPATH}
  "$python" -c "import netifaces" 2>/dev/null || pythonpath=$pythonpath:$here/shim
  local results=$build/test-results/reference_py_np$ranks
  rm -rf "$results"
  mkdir -p "$results"
  local mps=$build/mps started=0
  if [ ! -e "$mps/pipe/control" ]; then
    "$root/tools/mps.sh" start "$mps"
    started=1
  fi
  local status=0
  # Run from the copy's root, so that pytest imports python/test as the package `test` of the copy.
  (cd "$copy" && PYTHONPATH=$pythonpath CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log \
    "$root/test/mp_unit/run_mpi.sh" "$ranks" "$here/reference_tests.sh" rank "$results" "$tests" "$@") || status=$?
  [ "$started" = 1 ] && "$root/tools/mps.sh" stop "$mps"
  echo "reference test_mscclpp.py at $ranks ranks: $("$python" "$root/tools/summarize_tests.py" "$results" -)"
  return "$status"
}

# The ctest entries python_reference_np2/np4: skipped, with the reason, where the run cannot happen here.
ctest_entry() {
  local build=${1:?build dir} ranks=${2:?rank count} copy=${3:-$root/.reference-python}
  build_python "$build"
  if [ ! -f "$copy/python/test/test_mscclpp.py" ]; then
    echo "skipped: no copy of MSCCL++'s python/test in $copy (python/test/reference/reference_tests.sh prepare)"
    exit 77
  fi
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "skipped: no GPU here (nvidia-smi lists none)"
    exit 77
  fi
  if ! "$python" -c "import cupy" >/dev/null 2>&1; then
    echo "skipped: cupy is not installed for $python"
    exit 77
  fi
  build_ext "$build" "$copy"
  run "$build" "$ranks" "$copy"
}

case ${1:-} in
prepare) shift; prepare "$@" ;;
build) shift; build_ext "$@" ;;
rank) shift; rank "$@" ;;
run) shift; run "$@" ;;
ctest) shift; ctest_entry "$@" ;;
*) usage ;;
esac
