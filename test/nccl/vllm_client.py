# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""A ctypes client of libmscclpp_nccl.so that binds the symbols vLLM's NCCL wrapper binds, reads the
version the way vLLM does, and runs its all-reduce on torch tensors. Started with mpirun (mpi4py
carries the unique id). Usage: mpirun -np N python3 vllm_client.py <path of libmscclpp_nccl.so> [--bench]
"""

import ctypes
import sys
import time

import torch
from mpi4py import MPI

ncclResult_t = ctypes.c_int
ncclComm_t = ctypes.c_void_p
cudaStream_t = ctypes.c_void_p
buffer_type = ctypes.c_void_p


class ncclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


# name, result type, argument types: the functions vLLM's wrapper binds at start-up.
FUNCTIONS = [
    ("ncclGetErrorString", ctypes.c_char_p, [ncclResult_t]),
    ("ncclGetVersion", ncclResult_t, [ctypes.POINTER(ctypes.c_int)]),
    ("ncclGetUniqueId", ncclResult_t, [ctypes.POINTER(ncclUniqueId)]),
    ("ncclCommInitRank", ncclResult_t, [ctypes.POINTER(ncclComm_t), ctypes.c_int, ncclUniqueId, ctypes.c_int]),
    ("ncclAllReduce", ncclResult_t,
     [buffer_type, buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclReduce", ncclResult_t,
     [buffer_type, buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclAllGather", ncclResult_t,
     [buffer_type, buffer_type, ctypes.c_size_t, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclReduceScatter", ncclResult_t,
     [buffer_type, buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclSend", ncclResult_t, [buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclRecv", ncclResult_t, [buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclBroadcast", ncclResult_t,
     [buffer_type, buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ncclComm_t, cudaStream_t]),
    ("ncclCommDestroy", ncclResult_t, [ncclComm_t]),
    ("ncclCommAbort", ncclResult_t, [ncclComm_t]),
    ("ncclGroupStart", ncclResult_t, []),
    ("ncclGroupEnd", ncclResult_t, []),
    ("ncclCommWindowRegister", ncclResult_t,
     [ncclComm_t, buffer_type, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]),
    ("ncclCommWindowDeregister", ncclResult_t, [ncclComm_t, ctypes.c_void_p]),
]

NCCL_FLOAT32, NCCL_FLOAT16, NCCL_BFLOAT16, NCCL_SUM = 7, 6, 9, 0


class Nccl:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        self.fn = {}
        for name, res, args in FUNCTIONS:
            f = getattr(lib, name)  # AttributeError here is what makes vLLM refuse the library
            f.restype, f.argtypes = res, args
            self.fn[name] = f

    def check(self, result):
        if result != 0:
            raise RuntimeError(f"NCCL error: {self.fn['ncclGetErrorString'](result).decode()}")

    def version(self):
        v = ctypes.c_int()
        self.check(self.fn["ncclGetVersion"](ctypes.byref(v)))
        s = str(v.value)
        # vLLM's reading of the code: major, two-digit minor, patch.
        return f"{s[0]}.{s[1:3].lstrip('0') or '0'}.{s[3:].lstrip('0') or '0'}"


def main():
    path = sys.argv[1]
    bench = "--bench" in sys.argv
    world = MPI.COMM_WORLD
    rank, n = world.Get_rank(), world.Get_size()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    nccl = Nccl(path)
    version = nccl.version()
    if version != "2.28.3":
        raise AssertionError(f"version read as {version}, not 2.28.3")
    uid = ncclUniqueId()
    if rank == 0:
        nccl.check(nccl.fn["ncclGetUniqueId"](ctypes.byref(uid)))
    raw = world.bcast(bytes(uid.internal) if rank == 0 else None, root=0)
    ctypes.memmove(ctypes.addressof(uid), raw, 128)
    comm = ncclComm_t()
    nccl.check(nccl.fn["ncclCommInitRank"](ctypes.byref(comm), n, uid, rank))
    stream = torch.cuda.current_stream()
    for dtype, code, tol in ((torch.float32, NCCL_FLOAT32, 1e-5), (torch.float16, NCCL_FLOAT16, 1e-2),
                             (torch.bfloat16, NCCL_BFLOAT16, 5e-2)):
        for count in (1, 1024, 1 << 20):
            x = (torch.arange(count, device="cuda", dtype=torch.float32) % 7 + rank).to(dtype)
            out = torch.empty_like(x)
            nccl.check(nccl.fn["ncclAllReduce"](x.data_ptr(), out.data_ptr(), count, code, NCCL_SUM, comm,
                                                stream.cuda_stream))
            stream.synchronize()
            expect = sum(torch.arange(count, dtype=torch.float32) % 7 + r for r in range(n))
            if not torch.allclose(out.float().cpu(), expect, rtol=tol, atol=tol * n * 8):
                raise AssertionError(f"rank {rank}: all-reduce of {count} {dtype} wrong")
    if rank == 0:
        print(f"vllm-style client: version {version}, all-reduce correct at {n} ranks", flush=True)
    if bench:
        run_bench(nccl, comm, stream, rank, n)
    nccl.check(nccl.fn["ncclCommDestroy"](comm))


def run_bench(nccl, comm, stream, rank, n):
    """All-reduce latency through the C API from Python, against torch.distributed on the same run."""
    import torch.distributed as dist
    import os
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=rank, world_size=n)
    if rank == 0:
        print(f"{'bytes':>10} {'torch us':>10} {'ctypes us':>10} {'torch busbw GB/s':>17}", flush=True)
    for size in (1024, 16384, 262144, 1 << 20, 16 << 20, 64 << 20):
        x = torch.ones(size // 4, device="cuda")
        iters = 200 if size <= (1 << 20) else 40

        def timed(call):
            for _ in range(10):
                call()
            torch.cuda.synchronize()
            MPI.COMM_WORLD.Barrier()
            start = time.perf_counter()
            for _ in range(iters):
                call()
            torch.cuda.synchronize()
            return (time.perf_counter() - start) / iters * 1e6

        t_torch = timed(lambda: dist.all_reduce(x))
        t_ctypes = timed(lambda: nccl.fn["ncclAllReduce"](x.data_ptr(), x.data_ptr(), x.numel(), NCCL_FLOAT32,
                                                          NCCL_SUM, comm, stream.cuda_stream))
        busbw = size / (t_torch * 1e-6) * 2 * (n - 1) / n / 1e9
        if rank == 0:
            print(f"{size:>10} {t_torch:>10.2f} {t_ctypes:>10.2f} {busbw:>17.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, RuntimeError) as e:
        print(f"FAILED: {e}", file=sys.stderr, flush=True)
        MPI.COMM_WORLD.Abort(1)
