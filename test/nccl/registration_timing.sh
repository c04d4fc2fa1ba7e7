#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# NVIDIA's nccl-tests all_reduce_perf and all_gather_perf with symmetric window registration (-R 2)
# against the same binaries without registration (-R 0), measured in one run: registering buffers must
# not make the NCCL API slower. Each (ranks, binary, launch mode) runs ROUNDS times (default 2) with
# each setting, alternately; every row keeps its best time.
#
#   test/nccl/registration_timing.sh <nccl-tests binaries dir> <NCCL home> <out dir>
#   test/nccl/registration_timing.sh --summarize <out dir>    the table again, from that run's logs
#
# <nccl-tests binaries dir>: where test/nccl/run_nccl_tests.sh built them (<its out dir>/build);
# <NCCL home>: the install's mscclpp_nccl directory (lib/libnccl.so.2). Ranks 2 and 4 (REGISTRATION_RANKS),
# eager launches and CUDA graphs (-G 10), 1 KiB to 64 MiB by 4x, data checks on (-c 1). Ranks share the
# GPUs present as in run_nccl_tests.sh: rank r on GPU (local rank r mod GPUs), under a private MPS daemon.
#
# Prints one row per (ranks, binary, mode, size): out-of-place and in-place us without and with -R 2 and
# their ratio (below 1: registered is faster), then the worst ratio and every run that failed or
# reported wrong elements; exits 1 if any did. Without a GPU it runs nothing and says so.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

summarize() { # <log dir>
  python3 - "$1" <<'PY'
import glob
import os
import re
import sys

best, problems = {}, []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.log"))):
    m = re.match(r"(\w+)_perf-np(\d+)-(eager|graph)-R(\d)-\d+\.log$", os.path.basename(path))
    if not m:
        continue
    binary, np_, mode, reg = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
    rc_path = path + ".rc"
    rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "missing"
    if rc != "0":
        problems.append(f"{os.path.basename(path)}: exit {rc}")
    rows = 0
    for line in open(path, errors="replace"):
        f = line.split()
        # A result row: size count type redop root, then time algbw busbw #wrong out of place and in place.
        if len(f) < 12 or not f[0].isdigit() or not f[1].isdigit():
            continue
        try:
            times = (float(f[-8]), float(f[-4]))
            wrong = (f[-5], f[-1])
        except ValueError:
            continue
        rows += 1
        if wrong != ("0", "0"):
            problems.append(f"{os.path.basename(path)}: {f[0]} B: #wrong {wrong[0]} / {wrong[1]}")
        key = (np_, binary, mode, int(f[0]))
        slot = best.setdefault(key, {})
        for place, t in zip(("oop", "ip"), times):
            slot[(place, reg)] = min(t, slot.get((place, reg), t))
    if rows == 0 and rc == "0":
        problems.append(f"{os.path.basename(path)}: no result rows")

print(f"{'ranks':>5} {'binary':<11} {'mode':<5} {'size_B':>10} | {'oop -R 0':>9} {'oop -R 2':>9} {'ratio':>6}"
      f" | {'ip -R 0':>9} {'ip -R 2':>9} {'ratio':>6}")
worst = None
for key in sorted(best):
    slot = best[key]
    cells = []
    for place in ("oop", "ip"):
        plain, registered = slot.get((place, 0)), slot.get((place, 2))
        if plain is None or registered is None or plain <= 0:
            cells.append(f"{'-':>9} {'-':>9} {'-':>6}")
            continue
        ratio = registered / plain
        if worst is None or ratio > worst[0]:
            worst = (ratio, key, place)
        cells.append(f"{plain:9.2f} {registered:9.2f} {ratio:6.2f}")
    np_, binary, mode, size = key
    print(f"{np_:>5} {binary:<11} {mode:<5} {size:>10} | {cells[0]} | {cells[1]}")
if worst:
    ratio, (np_, binary, mode, size), place = worst
    print(f"worst ratio: {ratio:.2f} ({binary}, {np_} ranks, {mode}, {size} B, {place})")
for p in problems:
    print(f"FAILED: {p}")
sys.exit(1 if problems or not best else 0)
PY
}

if [ "${1:-}" = "--summarize" ]; then
  summarize "${2:?usage: registration_timing.sh --summarize <out dir>}/logs"
  exit $?
fi

usage="usage: registration_timing.sh <nccl-tests binaries dir> <NCCL home> <out dir>"
bins=$(cd "${1:?$usage}" && pwd) || exit 2
home=$(cd "${2:?$usage}" && pwd) || exit 2
out=$(mkdir -p "${3:?$usage}" && cd "$3" && pwd) || exit 2
for b in all_reduce_perf all_gather_perf; do
  [ -x "$bins/$b" ] || { echo "registration_timing: no $b in $bins"; exit 2; }
done
[ -e "$home/lib/libnccl.so.2" ] || { echo "registration_timing: no lib/libnccl.so.2 under $home"; exit 2; }
gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
if [ "$gpus" -eq 0 ]; then
  echo "registration_timing: no GPU here; nothing run"
  exit 0
fi

mps=$out/mps
"$root/tools/mps.sh" start "$mps" >/dev/null
trap '"$root/tools/mps.sh" stop "$mps" >/dev/null' EXIT
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log NCCL_NVLS_ENABLE=0 MSCCLPP_LOG_LEVEL=WARN
export LD_LIBRARY_PATH=$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} REGISTRATION_GPUS=$gpus
rm -rf "$out/logs"
mkdir -p "$out/logs"
read -r -a rank_counts <<<"${REGISTRATION_RANKS:-2 4}"
for round in $(seq "${ROUNDS:-2}"); do
  for np in "${rank_counts[@]}"; do
    for b in all_reduce_perf all_gather_perf; do
      for mode in eager graph; do
        graph=()
        [ $mode = graph ] && graph=(-G 10)
        for reg in 0 2; do
          log=$out/logs/$b-np$np-$mode-R$reg-$round.log
          # shellcheck disable=SC2016 # expanded by each rank's shell
          timeout 120 "$root/test/mp_unit/run_mpi.sh" "$np" bash -c \
            'NCCL_TESTS_DEVICE=$(( ${OMPI_COMM_WORLD_LOCAL_RANK:-0} % REGISTRATION_GPUS )) exec "$0" "$@"' \
            "$bins/$b" -g 1 -c 1 -b 1K -e 64M -f 4 -n 20 -w 5 -R "$reg" "${graph[@]}" >"$log" 2>&1
          echo $? >"$log.rc"
        done
      done
    done
  done
done
summarize "$out/logs"
