#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# registration_timing.sh --summarize on logs in nccl-tests' format: each row keeps its best time over
# the rounds, the ratio is registered over plain, the worst ratio is named, and a run that failed or
# reported wrong elements is listed and fails the summary.
#   registration_timing_test.sh <source root>
set -uo pipefail
root=${1:?source root}
script=$root/test/nccl/registration_timing.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# write_log <name> <exit status> <rows...>: a log as nccl-tests prints it, with its exit status beside it.
write_log() {
  local log=$work/run/logs/$1.log rc=$2
  shift 2
  {
    echo "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803"
    echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
    printf '%s\n' "$@"
    echo "# Out of bounds values : 0 OK"
  } >"$log"
  echo "$rc" >"$log.rc"
}
mkdir -p "$work/run/logs"
row() { # size oop_time oop_wrong ip_time ip_wrong
  echo "        $1           256     float     sum      -1    $2    0.10    0.10      $3    $4    0.10    0.10      $5"
}
write_log all_reduce_perf-np2-eager-R0-1 0 "$(row 1024 10.00 0 12.00 0)" "$(row 4096 20.00 0 20.00 0)"
write_log all_reduce_perf-np2-eager-R0-2 0 "$(row 1024 8.00 0 13.00 0)" "$(row 4096 22.00 0 21.00 0)"
write_log all_reduce_perf-np2-eager-R2-1 0 "$(row 1024 6.00 0 9.00 0)" "$(row 4096 30.00 0 19.00 0)"
write_log all_reduce_perf-np2-eager-R2-2 0 "$(row 1024 7.00 0 6.00 0)" "$(row 4096 25.00 0 18.00 0)"

out=$("$script" --summarize "$work/run")
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a clean set of logs must summarize with exit 0, got $rc"
# 1 KiB: best plain 8.00 / 12.00, best registered 6.00 / 6.00 -> 0.75 and 0.50.
echo "$out" | grep -Eq "^ +2 all_reduce +eager +1024 \| +8\.00 +6\.00 +0\.75 \| +12\.00 +6\.00 +0\.50$" ||
  fail "1 KiB row: best of each round, ratio registered over plain"
# 4 KiB: 20.00 -> 25.00 (1.25) out of place, 20.00 -> 18.00 (0.90) in place.
echo "$out" | grep -Eq "^ +2 all_reduce +eager +4096 \| +20\.00 +25\.00 +1\.25 \| +20\.00 +18\.00 +0\.90$" ||
  fail "4 KiB row"
echo "$out" | grep -q "^worst ratio: 1.25 (all_reduce, 2 ranks, eager, 4096 B, oop)$" || fail "worst ratio"
echo "$out" | grep -q "FAILED" && fail "no run failed, none may be listed"

# A wrong element and a failed run are listed, and the summary fails.
write_log all_gather_perf-np4-graph-R0-1 0 "$(row 1024 5.00 0 5.00 3)"
write_log all_gather_perf-np4-graph-R2-1 1 "$(row 1024 4.00 0 4.00 0)"
out=$("$script" --summarize "$work/run")
rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "wrong elements or a failed run must make the summary exit 1, got $rc"
echo "$out" | grep -q "^FAILED: all_gather_perf-np4-graph-R0-1.log: 1024 B: #wrong 0 / 3$" || fail "wrong elements not listed"
echo "$out" | grep -q "^FAILED: all_gather_perf-np4-graph-R2-1.log: exit 1$" || fail "failed run not listed"

# A run that printed no result row is listed.
write_log all_gather_perf-np4-eager-R0-1 0
out=$("$script" --summarize "$work/run")
echo "$out" | grep -q "^FAILED: all_gather_perf-np4-eager-R0-1.log: no result rows$" || fail "empty run not listed"

# Bad arguments: missing directories are refused with exit 2.
"$script" /nonexistent "$work" "$work/o" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a missing binaries directory must exit 2"
echo "PASS"
