# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""What the Python layer adds per call, measured against the same operation looped in C++ in the same run:

  mpirun -np 2 python3 python/benchmark/overhead.py [--iters N] [--trials N] [--size BYTES]

Rank 0 measures, rank 1 is the peer. Rows: Connection.write + flush (over CudaIpc on a GPU, Ethernet without
one), a KernelBuilder launch of a kernel taking a MemoryChannel and a PortChannel device handle, with
the handles fetched and packed on every call (as user code does) and with pre-packed arguments, and
Collectives.all_reduce on torch tensors and cupy arrays (stream given, and the current stream looked up)
against the C++ allReduce on the same buffers. The collective rows time the enqueueing only (both ranks
issue the same calls; the queue is drained between rounds of at most 256 calls, outside the timing), since
with a synchronization the GPU's time would hide the host's. The target is at most 5 us added per call;
the best of the trials is reported."""

import argparse
import ctypes
import os
import time

import mpi4py

mpi4py.rc.initialize = True
from mpi4py import MPI  # noqa: E402

import numpy as np  # noqa: E402

import mscclpp  # noqa: E402
from mscclpp import _cuda  # noqa: E402
from mscclpp._mscclpp import _bench  # noqa: E402
from mscclpp.comm import CommGroup  # noqa: E402
from mscclpp.utils import KernelBuilder, pack  # noqa: E402

TARGET_US = 5.0
NULL = ctypes.c_uint64(0)  # the kernel's uint64_t* out; a plain int would pack as 32 bits


def best_us(fn, iters, trials):
    """Best over `trials` of the time per call of `fn(iters)` (fn returns its own seconds, or None)."""
    best = float("inf")
    for _ in range(trials):
        start = time.perf_counter()
        seconds = fn(iters)
        if seconds is None:
            seconds = time.perf_counter() - start
        best = min(best, seconds / iters * 1e6)
    return best


def row(name, python_us, cpp_us):
    """Printed as soon as it is measured, so a run cut short still shows what it measured."""
    added = python_us - cpp_us
    verdict = "ok" if added <= TARGET_US else "over"
    print(f"{name:<52} {python_us:>10.2f} {cpp_us:>10.2f} {added:>10.2f}   {verdict} (<= {TARGET_US:g})", flush=True)


def setup(group, on_gpu, size):
    peer = 1 - group.my_rank
    if on_gpu:
        import torch

        buffer = torch.zeros(max(size, 4096), dtype=torch.uint8, device="cuda")
        connections = group.make_connection([peer], mscclpp.Transport.CudaIpc)
    else:
        buffer = np.zeros(max(size, 4096), dtype=np.uint8)
        cpu = mscclpp.EndpointConfig(mscclpp.Transport.Ethernet, mscclpp.DeviceType.CPU)
        connections = group.make_connection([peer], cpu)
    memories = group.register_tensor_with_connections(buffer, connections)
    return buffer, connections[peer], memories[peer], memories[group.my_rank]


def bench_write_flush(connection, dst, src, size, iters, trials):
    def python_loop(n):
        for _ in range(n):
            connection.write(dst, 0, src, 0, size)
            connection.flush()

    python_loop(10)
    cpp = best_us(lambda n: _bench.write_flush(connection, dst, src, size, n), iters, trials)
    python = best_us(python_loop, iters, trials)
    return python, cpp


def bench_launch(group, connections_buffer, iters, trials):
    import torch

    buffer, connections = connections_buffer
    memory_channel = next(iter(group.make_memory_channels(buffer, connections).values()))
    proxy = mscclpp.ProxyService()
    port_channel = next(iter(group.make_port_channels(proxy, buffer, connections).values()))
    here = os.path.dirname(os.path.abspath(__file__))
    kernel = KernelBuilder("overhead.cu", "touch", file_dir=here).get_compiled_kernel()
    stream = torch.cuda.current_stream().cuda_stream
    driver = _cuda.driver()

    def sync():
        driver.call("cuStreamSynchronize", ctypes.c_void_p(stream))

    def launch_with_handles(n):
        for _ in range(n):
            kernel.launch_kernel(pack(memory_channel.device_handle(), port_channel.device_handle(), NULL), 1, 32, 0,
                                 stream)
        sync()

    params = pack(memory_channel.device_handle(), port_channel.device_handle(), NULL)

    def launch_packed(n):
        for _ in range(n):
            kernel.launch_kernel(params, 1, 32, 0, stream)
        sync()

    def cpp_launch(n):
        return _bench.launch(driver.address_of("cuLaunchKernel"), driver.address_of("cuStreamSynchronize"),
                             kernel.function, params, 1, 32, 0, stream, n)

    launch_packed(10)
    cpp = best_us(cpp_launch, iters, trials)
    return best_us(launch_with_handles, iters, trials), best_us(launch_packed, iters, trials), cpp


def bench_all_reduce(group, framework, iters, trials):
    """(python us with the stream given, python us with stream=None, c++ us) per all_reduce of 1024 floats."""
    module = __import__(framework)
    coll = mscclpp.Collectives(group.communicator)
    count = 1024
    if framework == "torch":
        send = module.ones(count, dtype=module.float32, device="cuda")
        recv = module.empty_like(send)
        stream = module.cuda.current_stream().cuda_stream
        pointers = (send.data_ptr(), recv.data_ptr())
        synchronize = module.cuda.synchronize
    else:
        send = module.ones(count, dtype=module.float32)
        recv = module.empty_like(send)
        stream = module.cuda.get_current_stream().ptr
        pointers = (send.data.ptr, recv.data.ptr)
        synchronize = module.cuda.Device().synchronize
    fp32 = mscclpp.collectives.DataType.float32
    rounds = 256

    def in_rounds(enqueue):
        """Seconds spent enqueueing n calls, in rounds the launch queue holds without waiting."""

        def timed(n):
            seconds = 0.0
            while n > 0:
                batch = min(n, rounds)
                synchronize()
                group.barrier()
                start = time.perf_counter()
                enqueue(batch)
                seconds += time.perf_counter() - start
                n -= batch
            synchronize()
            return seconds

        return timed

    def python_given(n):
        for _ in range(n):
            coll.all_reduce(send, recv, stream=stream)

    def python_current(n):
        for _ in range(n):
            coll.all_reduce(send, recv)

    def cpp(n):
        _bench.all_reduce_enqueue(coll, *pointers, count, fp32, stream, n)

    in_rounds(python_given)(rounds)
    results = tuple(best_us(in_rounds(f), iters, trials) for f in (python_given, python_current, cpp))
    synchronize()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--size", type=int, default=8, help="bytes per write")
    args = parser.parse_args()
    world = MPI.COMM_WORLD
    if world.size != 2:
        raise SystemExit("run as 2 ranks: mpirun -np 2 python3 python/benchmark/overhead.py")
    on_gpu = _cuda.gpu_unavailable_reason() is None
    if on_gpu:
        import torch

        local = world.Split_type(MPI.COMM_TYPE_SHARED).rank
        device = local % torch.cuda.device_count()
        torch.cuda.set_device(device)
        _cuda.driver().set_device(device)
        try:
            import cupy

            cupy.cuda.Device(device).use()
        except ImportError:
            pass
    group = CommGroup(world)
    buffer, connection, dst, src = setup(group, on_gpu, args.size)
    if group.my_rank == 0:
        print(f"mscclpp {mscclpp.__version__} Python overhead, best of {args.trials} x {args.iters} calls")
        print(f"{'operation':<52} {'python us':>10} {'c++ us':>10} {'added us':>10}", flush=True)
        transport = "CudaIpc" if on_gpu else "Ethernet"
        row(f"Connection.write + flush ({transport}, {args.size} B)",
            *bench_write_flush(connection, dst, src, args.size, args.iters, args.trials))
    group.barrier()
    if on_gpu:
        # Both ranks build the channels (collective); rank 0 measures.
        import torch

        launch = bench_launch(group, (buffer, {1 - group.my_rank: connection}), args.iters, args.trials)
        if group.my_rank == 0:
            with_handles, packed, cpp = launch
            row("KernelBuilder launch, device_handle() + pack per call", with_handles, cpp)
            row("KernelBuilder launch, arguments packed once", packed, cpp)
        torch.cuda.synchronize()
        # Every rank issues the same collectives; rank 0 reports.
        for framework in ("torch", "cupy"):
            try:
                __import__(framework)
            except ImportError:
                if group.my_rank == 0:
                    print(f"(Collectives rows for {framework} skipped: {framework} is not installed)")
                continue
            given, current, cpp = bench_all_reduce(group, framework, args.iters, args.trials)
            if group.my_rank == 0:
                row(f"Collectives.all_reduce ({framework}, stream given)", given, cpp)
                row(f"Collectives.all_reduce ({framework}, current stream)", current, cpp)
    group.barrier()
    if group.my_rank == 0:
        if not on_gpu:
            print(f"(kernel launch and Collectives rows skipped: {_cuda.gpu_unavailable_reason()})")


if __name__ == "__main__":
    main()
