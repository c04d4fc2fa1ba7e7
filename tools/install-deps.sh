#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Installs the Debian/Ubuntu packages the build and tests need, only those that are missing.
# The CUDA toolkit itself is expected at /usr/local/cuda (or on PATH): it is not a Debian package here.
set -euo pipefail
"$(dirname "$0")/apt-install.sh" cmake g++ make pkg-config libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin \
  libibverbs-dev libnuma-dev nlohmann-json3-dev python3 clang-format
# The Python module and its tests, for the python3 on PATH (which may be pyenv's, not Debian's): pybind11 to
# build against, numpy to import, pytest and mpi4py (built against libopenmpi-dev) to test.
python_packages=(pybind11 numpy pytest mpi4py)
missing_python=()
for p in "${python_packages[@]}"; do
  python3 -c "import $p" 2>/dev/null || missing_python+=("$p")
done
if [ ${#missing_python[@]} -gt 0 ]; then
  echo "install-deps: pip installing ${missing_python[*]}"
  python3 -m pip install -q --disable-pip-version-check "${missing_python[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: the CUDA toolkit (nvcc) is missing; install CUDA 12 or newer" >&2
  exit 1
fi
