#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Makes sure that what the build and the benchmark (`run`) or also the tests (`test`, the default) need
# is present, and installs only what is not:
#   tools/install-deps.sh [run|test]
# Each need is looked for by what it provides, not by the package that usually provides it, because a
# machine may have it from pip, from a toolkit or from a manual install: a cmake on PATH at least as new
# as CMakeLists.txt's cmake_minimum_required, a C++ compiler, make or ninja, the headers and libraries a
# test program compiles and links against, mpicxx and mpirun, python3 and the modules it imports. What
# is missing is installed with apt-get (tools/apt-install.sh) where apt-get exists, and Python modules
# with pip. Whatever is still missing then (no apt-get, no network) is named with what provides it, and
# the script fails.
# clang-format is wanted, not needed: only tools/test.sh's format check uses it, and that check is
# reported as skipped without it. The CUDA toolkit (nvcc) is not installed here: it is not a Debian
# package on these machines.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
purpose=${1:-test}
case $purpose in
run | test) ;;
*)
  echo "usage: tools/install-deps.sh [run|test]" >&2
  exit 2
  ;;
esac
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

min_cmake=$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
cxx=${CXX:-c++}

version_at_least() { # <version> <minimum>
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

cmake_version() { cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9][0-9.]*\).*/\1/p'; }
have_cmake() {
  local version
  version=$(cmake_version)
  [ -n "$version" ] && version_at_least "$version" "$min_cmake"
}
have_cxx() { command -v "$cxx" >/dev/null 2>&1; }
have_build_tool() { command -v ninja >/dev/null 2>&1 || command -v make >/dev/null 2>&1; }
have_pkg_config() { command -v pkg-config >/dev/null 2>&1; }
have_mpi() { command -v mpicxx >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; }
have_python() { command -v python3 >/dev/null 2>&1; }

# Compiles and links a program that includes each header and links each library.
compiles() { # <libraries> <header>...
  local libs=$1 h
  shift
  have_cxx || return 1
  {
    for h in "$@"; do echo "#include <$h>"; done
    echo "int main() { return 0; }"
  } >"$work/probe.cc"
  # shellcheck disable=SC2086 # the libraries are words
  "$cxx" -std=c++17 "$work/probe.cc" -o "$work/probe" $libs -pthread >/dev/null 2>&1
}
# Usually all are there: one program tries them together first, and only if it fails, one each.
headers_present=unknown
all_headers() {
  if [ "$headers_present" = unknown ]; then
    headers_present=no
    compiles "-lgmock -lgtest -lnuma" gtest/gtest.h gmock/gmock.h infiniband/verbs.h numa.h nlohmann/json.hpp &&
      headers_present=yes
  fi
  [ "$headers_present" = yes ]
}
have_gtest() { all_headers || compiles "-lgmock -lgtest" gtest/gtest.h gmock/gmock.h; }
have_verbs() { all_headers || compiles "" infiniband/verbs.h; }
have_numa() { all_headers || compiles "-lnuma" numa.h; }
have_json() { all_headers || compiles "" nlohmann/json.hpp; }

# One line per need: what it is | Debian packages that provide it | the check.
needs=(
  "cmake >= $min_cmake on PATH|cmake|have_cmake"
  "a C++ compiler ($cxx)|g++|have_cxx"
  "make or ninja|make|have_build_tool"
  "GoogleTest and GoogleMock (gtest/gtest.h, gmock/gmock.h, libgtest, libgmock)|libgtest-dev libgmock-dev|have_gtest"
  "MPI (mpicxx and mpirun)|libopenmpi-dev openmpi-bin|have_mpi"
  "the ibverbs headers (infiniband/verbs.h)|libibverbs-dev|have_verbs"
  "libnuma (numa.h, libnuma)|libnuma-dev|have_numa"
  "nlohmann-json (nlohmann/json.hpp)|nlohmann-json3-dev|have_json"
  "python3|python3|have_python"
)
# The Python module and its tests, for the python3 on PATH (which may be pyenv's, not Debian's):
# pybind11 to build against, numpy to import, pytest and mpi4py (built against the MPI above) to test.
python_modules=()
if [ "$purpose" = test ]; then
  needs+=("pkg-config (the install check)|pkg-config|have_pkg_config")
  python_modules=(pybind11 numpy pytest mpi4py)
fi

missing_needs() {
  local need
  for need in "${needs[@]}"; do
    "${need##*|}" || echo "$need"
  done
}
missing_modules() {
  local m
  for m in "${python_modules[@]}"; do
    have_python && python3 -c "import $m" >/dev/null 2>&1 || echo "$m"
  done
}

mapfile -t missing < <(missing_needs)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    packages=()
    for need in "${missing[@]}"; do
      rest=${need#*|}
      read -r -a more <<<"${rest%%|*}"
      packages+=("${more[@]}")
    done
    echo "install-deps: installing ${packages[*]}"
    "$root/tools/apt-install.sh" "${packages[@]}" || echo "install-deps: apt-get could not install them"
    mapfile -t missing < <(missing_needs)
  else
    echo "install-deps: no apt-get here to install what is missing"
  fi
fi

mapfile -t modules < <(missing_modules)
if [ ${#modules[@]} -gt 0 ] && have_python; then
  echo "install-deps: pip installing ${modules[*]}"
  python3 -m pip install -q --disable-pip-version-check "${modules[@]}" ||
    echo "install-deps: pip could not install them"
  mapfile -t modules < <(missing_modules)
fi

if [ "$purpose" = test ] && ! command -v clang-format >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 && "$root/tools/apt-install.sh" clang-format >/dev/null 2>&1
  command -v clang-format >/dev/null 2>&1 ||
    echo "install-deps: clang-format not found and not installed: tools/test.sh will skip its format check"
fi

problems=()
for need in "${missing[@]}"; do
  rest=${need#*|}
  found=""
  if [ "${need##*|}" = have_cmake ]; then
    found=", or python3 -m pip install cmake"
    command -v cmake >/dev/null 2>&1 && found+="; found $(command -v cmake), version $(cmake_version)"
  fi
  problems+=("${need%%|*} (Debian: apt-get install ${rest%%|*}$found)")
done
for m in "${modules[@]}"; do problems+=("the Python module $m for $(command -v python3 || echo python3) (pip install $m)"); done
if ! command -v nvcc >/dev/null 2>&1; then
  problems+=("the CUDA toolkit's nvcc (CUDA 12 or newer, at /usr/local/cuda or on PATH)")
fi
if [ ${#problems[@]} -gt 0 ]; then
  echo "install-deps: missing, and could not be installed:" >&2
  for p in "${problems[@]}"; do echo "  - $p" >&2; done
  exit 1
fi
echo "install-deps: everything the $purpose step needs is present"
