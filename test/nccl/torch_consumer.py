# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""torch.distributed with backend "nccl" over libmscclpp_nccl.so (preloaded in front of torch's NCCL).

Run with torchrun (run_consumers.sh does): every collective torch's ProcessGroupNCCL issues is checked
against a value computed on the host. Exits non-zero on the first wrong result.
"""

import ctypes
import os
import sys

import torch
import torch.distributed as dist


def check(name, got, expect, tol=0.0):
    if not torch.allclose(got.float().cpu(), expect.float().cpu(), rtol=tol, atol=tol):
        diff = (got.float().cpu() - expect.float().cpu()).abs().max().item()
        raise AssertionError(f"rank {dist.get_rank()}: {name} wrong (max diff {diff})")
    if dist.get_rank() == 0:
        print(f"ok {name}", flush=True)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dist.init_process_group("nccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", torch.cuda.current_device())
    # torch.cuda.nccl.version() is the version torch was compiled against, not the library it runs on. What
    # libtorch_cuda.so calls is what the process's global symbol lookup finds first, so ask that lookup
    # (dlopen(NULL)) which ncclGetVersion it resolves to, and check our library is the one mapped in.
    resolved = ctypes.c_int()
    ctypes.CDLL(None).ncclGetVersion(ctypes.byref(resolved))
    with open("/proc/self/maps") as maps:
        mapped = "libmscclpp_nccl.so" in maps.read()
    if rank == 0:
        print(f"torch {torch.__version__} (built with NCCL {torch.cuda.nccl.version()}); "
              f"ncclGetVersion resolves to {resolved.value}", flush=True)
    if resolved.value != 22803 or not mapped:
        raise AssertionError(f"ncclGetVersion resolves to {resolved.value} (libmscclpp_nccl.so mapped: {mapped}), "
                             "not libmscclpp_nccl's 22803: is it preloaded?")

    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2), (torch.float16, 2e-3)):
        base = torch.arange(4096, device=dev, dtype=torch.float32) % 13
        x = (base + rank).to(dtype)
        ref = sum(base + r for r in range(n))
        y = x.clone()
        dist.all_reduce(y, op=dist.ReduceOp.SUM)
        check(f"all_reduce sum {dtype}", y, ref, tol * n * 20)
        y = x.clone()
        dist.all_reduce(y, op=dist.ReduceOp.AVG)
        check(f"all_reduce avg {dtype}", y, ref / n, tol * 20)
        y = x.clone()
        dist.all_reduce(y, op=dist.ReduceOp.MAX)
        check(f"all_reduce max {dtype}", y, base + (n - 1), tol)

    count = 1 << 16
    mine = torch.full((count,), float(rank), device=dev)
    gathered = torch.empty(count * n, device=dev)
    dist.all_gather_into_tensor(gathered, mine)
    check("all_gather_into_tensor", gathered, torch.arange(n, device=dev).repeat_interleave(count).float())

    big = torch.arange(count * n, device=dev, dtype=torch.float32) + rank
    out = torch.empty(count, device=dev)
    dist.reduce_scatter_tensor(out, big)
    expect = sum(torch.arange(count * n, device=dev, dtype=torch.float32) + r for r in range(n))
    check("reduce_scatter_tensor", out, expect[rank * count:(rank + 1) * count])

    for root in range(n):
        b = torch.full((1000,), float(rank * 10), device=dev)
        dist.broadcast(b, src=root)
        check(f"broadcast from {root}", b, torch.full((1000,), float(root * 10)))

    chunk = 257
    send = torch.arange(chunk * n, device=dev, dtype=torch.float32) + 1000 * rank
    recv = torch.empty_like(send)
    dist.all_to_all_single(recv, send)
    expect = torch.cat([torch.arange(rank * chunk, (rank + 1) * chunk, dtype=torch.float32) + 1000 * p
                        for p in range(n)])
    check("all_to_all_single", recv, expect)

    nxt, prv = (rank + 1) % n, (rank - 1) % n
    out = torch.full((5000,), float(rank), device=dev)
    inp = torch.empty(5000, device=dev)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, out, nxt), dist.P2POp(dist.irecv, inp, prv)])
    for r in reqs:
        r.wait()
    check("batch_isend_irecv ring", inp, torch.full((5000,), float(prv)))
    if rank == 0:
        dist.send(torch.full((100,), 42.0, device=dev), dst=1)
    elif rank == 1:
        t = torch.empty(100, device=dev)
        dist.recv(t, src=0)
        check("send/recv", t, torch.full((100,), 42.0))

    dist.barrier()
    if rank == 0:
        print("ok barrier", flush=True)

    half = list(range(n // 2)) if n >= 2 else [0]
    groups = [dist.new_group(half), dist.new_group([r for r in range(n) if r not in half])]
    mine_group = groups[0] if rank in half else groups[1]
    members = half if rank in half else [r for r in range(n) if r not in half]
    if members:
        t = torch.full((300,), float(rank), device=dev)
        dist.all_reduce(t, group=mine_group)
        check("new_group all_reduce", t, torch.full((300,), float(sum(members))))

    torch.cuda.synchronize()
    dist.destroy_process_group()
    if rank == 0:
        print(f"torch consumer: all checks passed at {n} ranks", flush=True)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
