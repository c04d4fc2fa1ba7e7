#!/usr/bin/env bash
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
#
# A private CUDA MPS daemon for tests that run several ranks on one GPU: without MPS each cross-process
# wait costs a time slice (milliseconds); with it, microseconds.
#   mps.sh start <dir>   start a daemon with its pipes and logs under <dir>, if MPS and a GPU exist
#   mps.sh stop <dir>    stop the daemon started there, if any
# Processes use it when CUDA_MPS_PIPE_DIRECTORY=<dir>/pipe is in their environment.
set -uo pipefail
action=${1:?start or stop}
dir=${2:?directory}
export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log

case $action in
start)
  if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1 || ! command -v nvidia-smi >/dev/null 2>&1 ||
    ! nvidia-smi -L >/dev/null 2>&1; then
    echo "mps.sh: no GPU or no MPS here; ranks run without MPS"
    exit 0
  fi
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
    # A control pipe outlives a daemon that was stopped or killed; clients that find no daemon behind
    # it run without MPS (time-sliced, milliseconds per wait), so only a daemon that answers counts.
    if echo get_server_list | timeout 5 nvidia-cuda-mps-control >/dev/null 2>&1; then
      echo "mps.sh: a daemon already serves $dir"
      exit 0
    fi
    rm -rf "$CUDA_MPS_PIPE_DIRECTORY"
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
  fi
  nvidia-cuda-mps-control -d || { echo "mps.sh: could not start the MPS daemon" >&2; exit 1; }
  echo "mps.sh: MPS daemon started under $dir"
  ;;
stop)
  if [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
    echo quit | nvidia-cuda-mps-control
    # quit returns before the daemon has exited: wait for it (up to 10 s), so that a daemon started
    # right after does not find this one's pipes and take them for a live daemon.
    for _ in $(seq 20); do
      echo get_server_list | timeout 1 nvidia-cuda-mps-control >/dev/null 2>&1 || break
      sleep 0.5
    done
    echo "mps.sh: MPS daemon under $dir stopped"
  fi
  ;;
*)
  echo "usage: mps.sh start|stop <dir>" >&2
  exit 2
  ;;
esac
