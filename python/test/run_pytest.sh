#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# One rank of the pytest suite: run_pytest.sh <python> [pytest arguments...], started by mpirun. Each rank
# writes its junit report to $MSCCLPP_TEST_RESULTS_DIR/rank<N>.xml for tools/summarize_tests.py.
set -euo pipefail
python=${1:?python executable}
shift
here=$(cd "$(dirname "$0")" && pwd)
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
args=(-q -p no:cacheprovider "$here")
if [ -n "${MSCCLPP_TEST_RESULTS_DIR:-}" ]; then
  mkdir -p "$MSCCLPP_TEST_RESULTS_DIR"
  args+=("--junitxml=$MSCCLPP_TEST_RESULTS_DIR/rank$rank.xml")
fi
# Rank 0 prints pytest's report; the other ranks print theirs only when they fail.
if [ "$rank" = 0 ]; then
  exec "$python" -m pytest "${args[@]}" "$@"
fi
log=$(mktemp)
status=0
"$python" -m pytest "${args[@]}" "$@" >"$log" 2>&1 || status=$?
[ "$status" -ne 0 ] && sed "s/^/[rank $rank] /" "$log"
rm -f "$log"
exit "$status"
