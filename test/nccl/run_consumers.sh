#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# Runs the real consumers of libmscclpp_nccl.so on a GPU machine: torch.distributed (backend "nccl",
# our library preloaded in front of torch's NCCL) and a vLLM-style ctypes client, at 2 and 4 ranks
# sharing the GPUs under MPS, then the all-reduce latency table. Ends with "N passed, N failed".
#   test/nccl/run_consumers.sh [build dir]      (default: build)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
lib=$build/src/ext/nccl/libmscclpp_nccl.so
[ -f "$lib" ] || { echo "no $lib: build first (tools/build.sh)"; exit 1; }

# torch's own NCCL, for what our library forwards (MSCCLPP_NCCL_LIB_PATH).
real_nccl=$(python3 -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
[ -n "$real_nccl" ] && [ -f "$real_nccl" ] && export MSCCLPP_NCCL_LIB_PATH=$real_nccl
echo "library: $lib; real NCCL for fallback: ${MSCCLPP_NCCL_LIB_PATH:-none}"

mps=$build/mps-consumers
"$root/tools/mps.sh" start "$mps"
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log NCCL_NVLS_ENABLE=0
trap '"$root/tools/mps.sh" stop "$mps"' EXIT

passed=0
failed=0
run() {
  local name=$1
  shift
  echo "== $name"
  if timeout 600 "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
}
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo
     --mca oob_tcp_if_include lo -x LD_PRELOAD -x MSCCLPP_NCCL_LIB_PATH -x CUDA_MPS_PIPE_DIRECTORY
     -x CUDA_MPS_LOG_DIRECTORY -x NCCL_NVLS_ENABLE)
for np in 2 4; do
  run "torch.distributed, $np ranks" env LD_PRELOAD="$lib" \
    torchrun --standalone --nproc-per-node "$np" "$root/test/nccl/torch_consumer.py"
  run "vLLM-style ctypes client, $np ranks" env LD_PRELOAD="$lib" "${mpi[@]}" -np "$np" \
    python3 "$root/test/nccl/vllm_client.py" "$lib"
done
for np in 2 4; do
  run "all-reduce latency, torch.distributed and the C API from Python, $np ranks" env LD_PRELOAD="$lib" \
    "${mpi[@]}" -np "$np" python3 "$root/test/nccl/vllm_client.py" "$lib" --bench
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
