#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Every shared object of the build uses the process's one shared C++ runtime (cmake/MscclppCxxRuntime.cmake
# says why): it needs libstdc++.so.6 (or libc++) and carries no runtime of its own, which would define
# __cxa_throw and the C++ personality routine inside it.
#   check_cxx_runtime.sh <shared object>...
set -uo pipefail
failed=0
for so in "$@"; do
  problems=""
  readelf -d "$so" | grep -Eq 'NEEDED.*lib(stdc|c)\+\+' || problems="it does not need a shared C++ runtime"
  own=$( { nm --defined-only "$so" 2>/dev/null; nm -D --defined-only "$so"; } | awk '$3 == "__cxa_throw" || $3 == "__gxx_personality_v0"' | sort -u)
  [ -n "$own" ] && problems="${problems:+$problems; }it carries its own C++ runtime: $(echo $own)"
  if [ -n "$problems" ]; then
    echo "FAILED: $so: $problems"
    failed=1
  else
    echo "ok: $so uses the shared C++ runtime"
  fi
done
exit "$failed"
