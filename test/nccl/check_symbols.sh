#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# check_symbols.sh <libmscclpp_nccl.so> <libmscclpp_nccl_static.a> <function list>
# The shared library must export exactly the listed functions and their pnccl* aliases (nothing else
# but the linker's own _-prefixed symbols), unversioned, with soname libnccl.so.2; the static one must
# define every one of them.
set -euo pipefail
so=$1
archive=$2
list=$3
expected=$(grep -v '^#' "$list" | grep -v '^$' | sed 'p;s/^/p/' | sort)
exported=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^_' | sed 's/@.*//' | sort)
status=0
missing=$(comm -23 <(echo "$expected") <(echo "$exported"))
extra=$(comm -13 <(echo "$expected") <(echo "$exported"))
if [ -n "$missing" ]; then echo "not exported by $so:"; echo "$missing"; status=1; fi
if [ -n "$extra" ]; then echo "exported by $so but not NCCL API:"; echo "$extra"; status=1; fi
if nm -D --defined-only "$so" | awk '{print $3}' | grep -q '^p\?nccl.*@'; then
  echo "NCCL symbols of $so carry a version; NCCL's own are unversioned"; status=1
fi
soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" != "libnccl.so.2" ]; then echo "soname of $so is '$soname', not libnccl.so.2"; status=1; fi
defined=$(nm --defined-only "$archive" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
missing_static=$(comm -23 <(echo "$expected") <(echo "$defined"))
if [ -n "$missing_static" ]; then echo "not defined in $archive:"; echo "$missing_static"; status=1; fi
n=$(echo "$expected" | wc -l)
[ $status -eq 0 ] && echo "all $n NCCL symbols exported, nothing else; soname libnccl.so.2"
exit $status
