#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# check_install.sh <build dir> <consumer source dir> <cmake>
set -euo pipefail
build=$1
consumer=$2
cmake=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/mscclpp/core.hpp"
test -f "$prefix/include/mscclpp/version.hpp"
ls "$prefix"/lib*/libmscclpp.so.0 >/dev/null
ls "$prefix"/lib*/libmscclpp_static.a >/dev/null

# 1. CMake package
"$cmake" -S "$consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$cmake" --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" | tee "$work/cmake.out"

# 2. pkg-config
libdir=$(dirname "$(ls "$prefix"/lib*/libmscclpp.so)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
c++ -std=c++17 "$consumer/main.cc" -o "$work/consumer-pc" $(pkg-config --cflags --libs mscclpp) -Wl,-rpath,"$libdir"
"$work/consumer-pc" | tee "$work/pc.out"

grep -q "libmscclpp 0.8.0" "$work/cmake.out"
grep -q "libmscclpp 0.8.0" "$work/pc.out"
grep -Eq "GPU: (available|none)" "$work/pc.out"
# The installed library must not need libcuda: it resolves the driver at run time.
if readelf -d "$libdir/libmscclpp.so" | grep -q "libcuda\.so"; then
  echo "libmscclpp.so links libcuda" >&2
  exit 1
fi
echo "install check passed"
