#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# tools/install-deps.sh on machines shaped like the GPU machine: every tool present but some installed
# outside dpkg (cmake from pip), no clang-format, no apt-get or no network. Each scenario runs the script
# with a PATH of its own: links to this machine's tools, minus the ones the scenario takes away, plus
# stand-ins that record being called (apt-get, pip) and fail the way an offline machine does.
#   test/tools/install_deps_test.sh <source root>
set -uo pipefail
root=$(cd "${1:?source root}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# The interpreter itself, not a launcher such as pyenv's shim (which looks python3 up on PATH again).
real_python=$(python3 -c 'import sys; print(sys.executable)')
[ -x /usr/local/cuda/bin/nvcc ] && PATH=/usr/local/cuda/bin:$PATH

# scenario <name> <tools to leave out>...: makes $work/<name>/bin and sets $dir, $bin and $calls.
scenario() {
  local name=$1 entry tool
  shift
  dir=$work/$name
  bin=$dir/bin
  calls=$dir/calls.log
  mkdir -p "$bin"
  : >"$calls"
  IFS=: read -r -a dirs <<<"$PATH"
  for entry in "${dirs[@]}"; do
    [ -d "$entry" ] || continue
    for tool in "$entry"/*; do
      [ -x "$tool" ] && [ ! -d "$tool" ] && [ ! -e "$bin/${tool##*/}" ] && ln -s "$tool" "$bin/${tool##*/}"
    done
  done
  # The stand-ins below are new files: writing through a link would overwrite this machine's tool.
  for tool in cmake clang-format apt-get apt dpkg-query sudo python3 "$@"; do rm -f "$bin/$tool"; done
  # python3 as this machine runs it: a wrapper rather than a link, so that the interpreter keeps the
  # module path it has here (PYTHONPATH, which `env -i` below clears; a virtual environment, which a link
  # would hide).
  printf '#!/bin/sh\n%sexec "%s" "$@"\n' "${PYTHONPATH:+PYTHONPATH='$PYTHONPATH' }" "$real_python" >"$bin/python3"
  chmod +x "$bin/python3"
  # cmake as pip installs it: a script outside dpkg, new enough.
  printf '#!/bin/sh\necho "cmake version 3.31.6"\necho\necho "CMake suite maintained and supported by Kitware (kitware.com/cmake)."\n' >"$bin/cmake"
  chmod +x "$bin/cmake"
}

# A stand-in apt-get (with dpkg-query reporting nothing installed, and sudo running its command as is):
# `update` works, `install` fails as it does without a network.
offline_apt() {
  printf '#!/bin/sh\nexit 1\n' >"$bin/dpkg-query"
  printf '#!/bin/sh\nexec "$@"\n' >"$bin/sudo"
  cat >"$bin/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$calls"
case "\$*" in *install*) echo "E: Unable to locate package" >&2; exit 100 ;; esac
exit 0
EOF
  chmod +x "$bin/dpkg-query" "$bin/sudo" "$bin/apt-get"
}

run_install_deps() { # <purpose>
  env -i HOME="$HOME" PATH="$bin" bash "$root/tools/install-deps.sh" "$1" >"$dir/out.log" 2>&1
}

expect() { # <description> <condition...>
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
  else
    echo "FAILED: $what"
    echo "---- install-deps output ($dir/out.log) ----"
    cat "$dir/out.log"
    echo "---- calls ----"
    cat "$calls"
    failures=$((failures + 1))
  fi
}
said() { grep -qF -- "$1" "$dir/out.log"; }

# 1. Everything there, cmake from pip, no clang-format, no apt-get: nothing to install, nothing called.
scenario complete
run_install_deps test
rc=$?
expect "complete machine without apt-get: succeeds" [ "$rc" -eq 0 ]
expect "complete machine: apt-get is not needed" [ ! -s "$calls" ]
expect "complete machine: says the format check will be skipped" said "clang-format not found"
run_install_deps run
expect "complete machine: the run step succeeds too" [ $? -eq 0 ]

# 2. MPI missing and no apt-get: fails, naming MPI and its package.
scenario no-mpi mpicxx mpirun
run_install_deps run
rc=$?
expect "no MPI, no apt-get: fails" [ "$rc" -ne 0 ]
expect "no MPI, no apt-get: says there is no apt-get" said "no apt-get here"
expect "no MPI, no apt-get: names MPI and its package" said "MPI (mpicxx and mpirun) (Debian: apt-get install libopenmpi-dev openmpi-bin)"
expect "no MPI, no apt-get: names nothing that is present" bash -c "! grep -q -e gtest -e numa -e cmake '$dir/out.log'"

# 3. MPI missing, apt-get present but offline: asks for exactly MPI's packages, then fails naming MPI.
scenario offline-no-mpi mpicxx mpirun
offline_apt
run_install_deps run
rc=$?
expect "no MPI, offline apt-get: fails" [ "$rc" -ne 0 ]
expect "no MPI, offline apt-get: installs only what is missing" grep -qx "apt-get install -y -qq --no-install-recommends libopenmpi-dev openmpi-bin" "$calls"
expect "no MPI, offline apt-get: names MPI" said "MPI (mpicxx and mpirun)"

# 4. A cmake older than cmake_minimum_required: fails, naming the minimum and what was found.
scenario old-cmake
rm "$bin/cmake"
printf '#!/bin/sh\necho "cmake version 3.16.3"\n' >"$bin/cmake"
chmod +x "$bin/cmake"
run_install_deps run
rc=$?
minimum=$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
expect "old cmake: fails" [ "$rc" -ne 0 ]
expect "old cmake: names the minimum and the cmake found" said "cmake >= $minimum on PATH"
expect "old cmake: says which version it found" said "version 3.16.3"

# 5. A Python module missing and pip offline: pip is asked for that module only, and the failure names it.
scenario no-numpy
rm "$bin/python3"
cat >"$bin/python3" <<EOF
#!/bin/sh
if [ "\$1" = "-c" ] && [ "\$2" = "import numpy" ]; then exit 1; fi
if [ "\$1" = "-m" ] && [ "\$2" = "pip" ]; then echo "pip \$*" >>"$calls"; exit 1; fi
exec "$real_python" "\$@"
EOF
chmod +x "$bin/python3"
run_install_deps test
rc=$?
expect "no numpy, offline pip: fails" [ "$rc" -ne 0 ]
expect "no numpy, offline pip: asks pip for numpy only" grep -q "pip -m pip install .* numpy$" "$calls"
expect "no numpy, offline pip: names numpy" said "the Python module numpy"
run_install_deps run
expect "no numpy: the run step does not need it" [ $? -eq 0 ]

echo "install-deps scenarios: $failures failed"
[ "$failures" -eq 0 ]
