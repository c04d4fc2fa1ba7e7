#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Formats every tracked C, C++ and CUDA file with the tree's .clang-format (clang-format 14, Debian's).
#   format.sh           rewrite the files in place
#   format.sh --check   change nothing; list the files that differ and exit 1 if any do
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.cpp' '*.cu' '*.h' '*.hpp' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  differ=$(clang-format --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning:.*/\1/p' | sort -u)
  if [ -n "$differ" ]; then
    echo "not formatted (run tools/format.sh):"
    echo "$differ"
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
