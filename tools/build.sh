#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Configures and builds into ${MSCCLPP_BUILD_DIR:-build}. Extra arguments go to cmake's configure step
# (e.g. -DCMAKE_BUILD_TYPE=Debug, -DMSCCLPP_SANITIZE=address,undefined). MSCCLPP_BUILD_TARGET builds one
# target instead of all.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MSCCLPP_BUILD_DIR:-$root/build}
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
generator=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)" ${MSCCLPP_BUILD_TARGET:+--target "$MSCCLPP_BUILD_TARGET"}
