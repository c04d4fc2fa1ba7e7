#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# check_install.sh <build dir> <test/install dir> <cmake> <nvcc> <CUDA include dirs, ':' separated>
# Installs the build into a temporary prefix, then builds and runs consumers of it:
#   - a C++ consumer of libmscclpp, through find_package(mscclpp CONFIG) and through pkg-config;
#   - a C consumer of the NCCL API, built the way NCCL's consumers are (-I<home>/include -L<home>/lib
#     -lnccl against the NCCL home) and through the CMake target mscclpp::mscclpp_nccl: each must record
#     libnccl.so.2, find it through its RUNPATH in the NCCL home (not a system NCCL, even one in the
#     dynamic linker's cache) and compile in the home's nccl.h;
#   - the NCCL home's nccl_device.h must compile device code written against NCCL 2.28's device API.
set -euo pipefail
build=$1
tests=$2
cmake=$3
nvcc=$4
IFS=: read -r -a cuda_include_dirs <<<"$5"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() {
  echo "install check: $*" >&2
  exit 1
}

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/mscclpp/core.hpp"
test -f "$prefix/include/mscclpp/version.hpp"
ls "$prefix"/lib*/libmscclpp.so.0 >/dev/null
ls "$prefix"/lib*/libmscclpp_static.a >/dev/null

# 1. CMake package
"$cmake" -S "$tests/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$cmake" --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" | tee "$work/cmake.out"

# 2. pkg-config
libdir=$(dirname "$(ls "$prefix"/lib*/libmscclpp.so)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046 # pkg-config's flags are words
c++ -std=c++17 "$tests/consumer/main.cc" -o "$work/consumer-pc" $(pkg-config --cflags --libs mscclpp) -Wl,-rpath,"$libdir"
"$work/consumer-pc" | tee "$work/pc.out"

grep -q "libmscclpp 0.8.0" "$work/cmake.out"
grep -q "libmscclpp 0.8.0" "$work/pc.out"
grep -Eq "GPU: (available|none)" "$work/pc.out"
# The installed library must not need libcuda: it resolves the driver at run time.
if readelf -d "$libdir/libmscclpp.so" | grep -q "libcuda\.so"; then
  echo "libmscclpp.so links libcuda" >&2
  exit 1
fi

# 3. The NCCL home
home=$libdir/mscclpp_nccl
for f in include/nccl.h include/nccl_device.h lib/libnccl.so lib/libnccl.so.2; do
  [ -e "$home/$f" ] || fail "the NCCL home has no $f"
done
ours=$(readlink -f "$libdir/libmscclpp_nccl.so")
for f in libnccl.so libnccl.so.2; do
  [ "$(readlink -f "$home/lib/$f")" = "$ours" ] || fail "$home/lib/$f does not lead to $ours"
done
cmp -s "$home/include/nccl.h" "$prefix/include/mscclpp/nccl.h" || fail "the NCCL home's nccl.h differs from <mscclpp/nccl.h>"
header_version=$(sed -n 's/^#define NCCL_VERSION_CODE \([0-9]*\).*/\1/p' "$home/include/nccl.h")
[ -n "$header_version" ] || fail "no NCCL_VERSION_CODE in $home/include/nccl.h"

# <program>: records libnccl.so.2, finds it in the NCCL home through its RUNPATH (with no
# LD_LIBRARY_PATH to help), was compiled with our nccl.h and runs our library.
runs_ours() {
  local program=$1 dynamic resolved
  dynamic=$(readelf -d "$program")
  grep -q "(NEEDED).*\[libnccl.so.2\]" <<<"$dynamic" || fail "$program does not record libnccl.so.2:"$'\n'"$dynamic"
  grep -Eq "\((RUNPATH|RPATH)\).*$home/lib" <<<"$dynamic" || fail "$program has no RUNPATH to $home/lib:"$'\n'"$dynamic"
  resolved=$(env -u LD_LIBRARY_PATH ldd "$program" | sed -n 's/^\s*libnccl.so.2 => \(\S*\) .*/\1/p')
  [ "$resolved" = "$home/lib/libnccl.so.2" ] || fail "$program resolves libnccl.so.2 to '$resolved', not to $home/lib"
  env -u LD_LIBRARY_PATH "$program" | tee "$work/nccl.out"
  grep -qx "nccl.h $header_version, library $header_version" "$work/nccl.out" ||
    fail "$program was not built with the home's nccl.h ($header_version) or does not run our library"
  echo "$program runs $resolved"
}

cuda_flags=()
for d in "${cuda_include_dirs[@]}"; do cuda_flags+=("-I$d"); done
cc -std=c11 -I"$home/include" "${cuda_flags[@]}" "$tests/nccl_consumer/main.c" -o "$work/nccl-consumer-home" \
  -L"$home/lib" -Wl,-rpath,"$home/lib" -lnccl
runs_ours "$work/nccl-consumer-home"

"$cmake" -S "$tests/nccl_consumer" -B "$work/nccl-cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$cmake" --build "$work/nccl-cmake-build" >/dev/null
runs_ours "$work/nccl-cmake-build/nccl_consumer"

# nccl_device.h: the home's headers come first (not a toolkit's NCCL), and device code compiles.
device_src=$tests/nccl_consumer/device_api_names.cu
"$nvcc" -std=c++17 -I"$home/include" -M "$device_src" -o "$work/device.d"
for h in nccl.h nccl_device.h; do
  grep -q "$home/include/$h" "$work/device.d" || fail "$device_src did not include $home/include/$h"
done
"$nvcc" -std=c++17 -arch=compute_90 -I"$home/include" -c "$device_src" -o "$work/device_api_names.o" ||
  fail "the NCCL home's nccl_device.h does not compile $device_src"
echo "install check passed"
