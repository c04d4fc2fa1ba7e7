# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""mscclpp.Collectives on torch tensors and cupy arrays, every rank of the run in one group: each collective
for fp32, bf16 (torch only: cupy has no bfloat16), fp16 and int32 at an odd small count and a count large
enough for the staged path, on the current, a framework's and a raw stream, captured into a CUDA graph and
replayed; registered tensors (zero-copy); and what a tensor argument may not be. Skips, with the reason,
without a GPU or the framework (the reduction operators' host scalars are checked without one)."""

import threading
import time

import numpy as np
import pytest
from mpi4py import MPI

import mscclpp
from mscclpp.collectives import Collectives, ReduceOp

DTYPES = ["float32", "bfloat16", "float16", "int32"]
FRAMEWORKS = ["torch", "cupy"]
COUNTS = [1001, 1 << 20]
RTOL = {"float32": 1e-6, "bfloat16": 1e-2, "float16": 2e-3, "int32": 0}
Kind = ReduceOp.Kind


def values(rank, count, offset=0):
    """Rank `rank`'s input: small integers (exact in every tested type), different on every rank."""
    index = np.arange(count, dtype=np.int64) + offset
    return ((rank + 1) * 3 + index) % 11 + 1


class Framework:
    """Makes GPU tensors of one framework from numpy values and reads them back as float64."""

    def __init__(self, name):
        self.name = name
        self.module = pytest.importorskip(name)

    def tensor(self, host, dtype):
        if self.name == "torch":
            torch = self.module
            return torch.from_numpy(np.asarray(host, dtype=np.float64)).to(getattr(torch, dtype)).cuda()
        if dtype == "bfloat16":
            pytest.skip("cupy has no bfloat16")
        return self.module.asarray(np.asarray(host).astype(dtype))

    def empty(self, count, dtype):
        return self.tensor(np.full(count, -1), dtype)

    def assign(self, tensor, source):
        """Overwrites `tensor` in place (a captured graph keeps reading the same memory)."""
        if self.name == "torch":
            tensor.copy_(source)
        else:
            tensor[...] = source

    def host(self, tensor):
        self.synchronize()
        if self.name == "torch":
            return tensor.cpu().to(self.module.float64).numpy()
        return self.module.asnumpy(tensor).astype(np.float64)

    def synchronize(self):
        if self.name == "torch":
            self.module.cuda.synchronize()
        else:
            self.module.cuda.Device().synchronize()


@pytest.mark.parametrize(
    "dtype,scalar,bits",
    [("float16", 1.5, 0x3E00), ("bfloat16", 1.5, 0x3FC0), ("float32", 1.5, 0x3FC00000), ("int32", 2, 2),
     ("float64", -2.0, 0xC000000000000000), ("int8", -1, 0xFF)],
)
def test_pre_mul_sum_host_scalar_is_stored_in_the_element_type(dtype, scalar, bits):
    op = ReduceOp.pre_mul_sum_host(scalar, getattr(mscclpp.collectives.DataType, dtype))
    assert op.kind == Kind.PreMulSum
    assert op.host_scalar_bits == bits


def test_reduce_op_from_kind():
    assert ReduceOp(Kind.Max).kind == Kind.Max
    assert repr(ReduceOp(Kind.Avg)) == "ReduceOp(avg)"


@pytest.fixture(scope="module")
def coll(group, gpu_session):
    return Collectives(group.communicator)


@pytest.fixture(params=FRAMEWORKS)
def fw(request, gpu_session):
    return Framework(request.param)


def check(fw, tensor, expected, dtype):
    np.testing.assert_allclose(fw.host(tensor), np.asarray(expected, dtype=np.float64), rtol=RTOL[dtype], atol=0)


def reduced(kind, inputs, dtype):
    stacked = np.stack(inputs).astype(np.float64)
    if kind == Kind.Sum:
        return stacked.sum(axis=0)
    if kind == Kind.Prod:
        return stacked.prod(axis=0)
    if kind == Kind.Max:
        return stacked.max(axis=0)
    if kind == Kind.Min:
        return stacked.min(axis=0)
    total = stacked.sum(axis=0)
    return np.floor_divide(total, len(inputs)) if dtype == "int32" else total / len(inputs)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", [Kind.Sum, Kind.Prod, Kind.Max, Kind.Min, Kind.Avg])
def test_all_reduce(coll, fw, world, dtype, count, kind):
    n = world.size
    send = fw.tensor(values(world.rank, count), dtype)
    recv = fw.empty(count, dtype)
    coll.all_reduce(send, recv, op=kind)
    check(fw, recv, reduced(kind, [values(r, count) for r in range(n)], dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce_in_place_pre_mul_sum(coll, fw, world, dtype):
    count = 4097
    buffer = fw.tensor(values(world.rank, count), dtype)
    coll.all_reduce(buffer, buffer, op=ReduceOp.pre_mul_sum_host(2, getattr(mscclpp.collectives.DataType, dtype)))
    check(fw, buffer, 2 * sum(values(r, count) for r in range(world.size)), dtype)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather(coll, fw, world, dtype, count):
    send = fw.tensor(values(world.rank, count), dtype)
    recv = fw.empty(count * world.size, dtype)
    coll.all_gather(send, recv)
    check(fw, recv, np.concatenate([values(r, count) for r in range(world.size)]), dtype)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter(coll, fw, world, dtype, count):
    n = world.size
    send = fw.tensor(values(world.rank, count * n), dtype)
    recv = fw.empty(count, dtype)
    coll.reduce_scatter(send, recv, op=Kind.Sum)
    mine = slice(world.rank * count, (world.rank + 1) * count)
    check(fw, recv, sum(values(r, count * n)[mine] for r in range(n)), dtype)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast(coll, fw, world, dtype, count):
    root = world.size - 1
    send = fw.tensor(values(world.rank, count), dtype)
    recv = fw.empty(count, dtype)
    coll.broadcast(send, recv, root=root)
    check(fw, recv, values(root, count), dtype)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(coll, fw, world, dtype, count):
    root = 1 % world.size
    send = fw.tensor(values(world.rank, count), dtype)
    recv = fw.empty(count, dtype)
    coll.reduce(send, recv, root=root, op=Kind.Max)
    expected = reduced(Kind.Max, [values(r, count) for r in range(world.size)], dtype)
    check(fw, recv, expected if world.rank == root else np.full(count, -1), dtype)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_to_all(coll, fw, world, dtype, count):
    n = world.size
    send = fw.tensor(values(world.rank, count * n), dtype)
    recv = fw.empty(count * n, dtype)
    coll.all_to_all(send, recv)
    mine = slice(world.rank * count, (world.rank + 1) * count)
    check(fw, recv, np.concatenate([values(r, count * n)[mine] for r in range(n)]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_and_scatter(coll, fw, world, dtype):
    n, count, root = world.size, 3001, 0
    gathered = fw.empty(count * n, dtype)
    coll.gather(fw.tensor(values(world.rank, count), dtype), gathered, root=root)
    if world.rank == root:
        check(fw, gathered, np.concatenate([values(r, count) for r in range(n)]), dtype)
    scattered = fw.empty(count, dtype)
    coll.scatter(fw.tensor(values(root, count * n), dtype), scattered, root=root)
    check(fw, scattered, values(root, count * n)[world.rank * count : (world.rank + 1) * count], dtype)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_send_recv_ring(coll, fw, world, dtype, count):
    """Every rank sends to the next and receives from the previous, in one group (no order deadlocks)."""
    n = world.size
    send = fw.tensor(values(world.rank, count), dtype)
    recv = fw.empty(count, dtype)
    coll.group_start()
    coll.send(send, (world.rank + 1) % n)
    coll.recv(recv, (world.rank - 1) % n)
    coll.group_end()
    check(fw, recv, values((world.rank - 1) % n, count), dtype)


def test_streams_of_every_kind(coll, fw, world):
    """The same all-reduce on the current stream (None), the framework's stream object and its raw handle."""
    count = 2048
    expected = sum(values(r, count) for r in range(world.size))
    if fw.name == "torch":
        side = fw.module.cuda.Stream()
        streams = [None, side, side.cuda_stream]
    else:
        side = fw.module.cuda.Stream(non_blocking=True)
        streams = [None, side, side.ptr]
    for stream in streams:
        send = fw.tensor(values(world.rank, count), "float32")
        recv = fw.empty(count, "float32")
        fw.synchronize()
        coll.all_reduce(send, recv, stream=stream)
        check(fw, recv, expected, "float32")


def delay_current_stream(fw):
    """Queues about 50 ms of GPU work on the framework's current stream."""
    if fw.name == "torch":
        fw.module.cuda._sleep(100_000_000)
        return
    spin = fw.module.RawKernel(
        r"""extern "C" __global__ void spin(long long cycles) {
              long long start = clock64();
              while (clock64() - start < cycles) {}
            }""",
        "spin",
    )
    spin((1,), (1,), (np.int64(100_000_000),))


def test_work_on_the_current_stream_comes_before_a_named_stream(coll, fw, world):
    """The input is written on the framework's current stream behind a long kernel, and the all-reduce
    is enqueued at once on another stream: it must still read the new input (the call orders the tensor's
    current stream before the stream it is given)."""
    count = 4096
    send = fw.tensor(values(world.rank, count), "float32")
    recv = fw.empty(count, "float32")
    update = fw.tensor(values(world.rank, count, offset=5), "float32")
    side = fw.module.cuda.Stream() if fw.name == "torch" else fw.module.cuda.Stream(non_blocking=True)
    fw.synchronize()
    world.barrier()
    delay_current_stream(fw)
    fw.assign(send, update)
    coll.all_reduce(send, recv, stream=side)
    check(fw, recv, sum(values(r, count, offset=5) for r in range(world.size)), "float32")


@pytest.mark.parametrize("dtype", DTYPES)
def test_graph_capture_and_replay(coll, fw, world, dtype):
    """An all-reduce and an all-gather captured once, replayed three times with new inputs each time."""
    n, count = world.size, 5000
    send = fw.tensor(values(world.rank, count), dtype)
    reduced_out = fw.empty(count, dtype)
    gathered = fw.empty(count * n, dtype)
    fw.synchronize()
    world.barrier()
    if fw.name == "torch":
        torch = fw.module
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            coll.all_reduce(send, reduced_out)
            coll.all_gather(send, gathered)
        replay = graph.replay
    else:
        cupy = fw.module
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            coll.all_reduce(send, reduced_out)
            coll.all_gather(send, gathered)
            graph = stream.end_capture()

        def replay():
            graph.launch(stream)

    for step in range(1, 4):
        inputs = [values(r, count, offset=step) for r in range(n)]
        fw.assign(send, fw.tensor(inputs[world.rank], dtype))
        fw.synchronize()
        replay()
        check(fw, reduced_out, sum(inputs), dtype)
        check(fw, gathered, np.concatenate(inputs), dtype)


def test_registered_tensors_run_zero_copy(coll, fw, world):
    """Registered send and recv tensors above the two-shot sizes: Auto runs the all-reduce zero-copy, the
    all-gather into a registered output with 1 MiB parts too; both results checked, then deregistered."""
    n, count = world.size, (4 << 20) // 4 + 3
    Collective, Algorithm = mscclpp.collectives.Collective, mscclpp.collectives.Algorithm
    assert coll.algorithm_for(Collective.AllReduce, count * 4, True) == Algorithm.ZeroCopy
    assert coll.algorithm_for(Collective.AllGather, count * 4, True) == Algorithm.ZeroCopy
    send = fw.tensor(values(world.rank, count), "float32")
    recv = fw.empty(count, "float32")
    gathered = fw.empty(count * n, "float32")
    fw.synchronize()
    for tensor in (send, recv, gathered):
        coll.register_buffer(tensor)
    try:
        coll.all_reduce(send, recv)
        check(fw, recv, sum(values(r, count) for r in range(n)), "float32")
        coll.all_gather(send, gathered)
        check(fw, gathered, np.concatenate([values(r, count) for r in range(n)]), "float32")
    finally:
        for tensor in (send, recv, gathered):
            coll.deregister_buffer(tensor)


def test_registration_of_host_memory_or_an_unregistered_tensor_is_refused(coll, fw, world):
    host = np.zeros(16, dtype=np.float32)
    with pytest.raises(mscclpp.Error, match="not in CUDA memory"):
        coll.register_buffer(host)
    with pytest.raises(mscclpp.Error):
        coll.deregister_buffer(fw.empty(16, "float32"))


def test_construction_releases_the_gil(group, world, gpu_session):
    """While one rank waits in the constructor for a late peer, another Python thread of it keeps running."""
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    thread = threading.Thread(target=ticker)
    if world.rank == 0:
        thread.start()
    else:
        time.sleep(1.0)
    started = time.monotonic()
    Collectives(group.communicator)
    stop.set()
    if world.rank == 0:
        thread.join()
        assert len([t for t in ticks if t > started + 0.1]) > 10


# What a tensor argument may not be: each refused with mscclpp.Error before anything is enqueued, on every
# rank alike (so the ranks' call sequences stay matched).


def test_host_memory_is_refused(coll, world):
    host = np.zeros(16, dtype=np.float32)
    with pytest.raises(mscclpp.Error, match="not in CUDA memory"):
        coll.all_reduce(host, host)


def test_object_without_dlpack_is_refused(coll, world):
    with pytest.raises(mscclpp.Error, match="__dlpack__"):
        coll.all_reduce([1.0, 2.0], [0.0, 0.0])


def test_non_contiguous_tensor_is_refused(coll, fw, world):
    full = fw.tensor(values(world.rank, 64), "float32")
    with pytest.raises(mscclpp.Error, match="not contiguous"):
        coll.all_reduce(full[::2], full[::2])


def test_mismatched_types_are_refused(coll, fw, world):
    with pytest.raises(mscclpp.Error, match="send is float, recv is int32"):
        coll.all_reduce(fw.empty(16, "float32"), fw.empty(16, "int32"))


def test_wrong_counts_are_refused(coll, fw, world):
    with pytest.raises(mscclpp.Error, match="recv has 15 elements, expected 16"):
        coll.all_reduce(fw.empty(16, "float32"), fw.empty(15, "float32"))
    with pytest.raises(mscclpp.Error, match="expected"):
        coll.all_gather(fw.empty(16, "float32"), fw.empty(16 * world.size + 1, "float32"))
    with pytest.raises(mscclpp.Error, match="not a multiple"):
        coll.all_to_all(fw.empty(world.size * 4 + 1, "float32"), fw.empty(world.size * 4 + 1, "float32"))


def test_unusable_type_is_refused(coll, fw, world):
    if fw.name == "cupy":
        tensor = fw.module.zeros(16, dtype=fw.module.complex64)
    else:
        tensor = fw.module.zeros(16, dtype=fw.module.complex64, device="cuda")
    with pytest.raises(mscclpp.Error, match="not a type collectives have"):
        coll.all_reduce(tensor, tensor)


def test_bad_stream_is_refused(coll, fw, world):
    tensor = fw.empty(16, "float32")
    with pytest.raises(mscclpp.Error, match="stream: expected"):
        coll.all_reduce(tensor, tensor, stream="default")


def test_same_error_on_every_rank_keeps_ranks_in_step(coll, fw, world):
    """After refused calls the object still works: nothing was enqueued on any rank."""
    count = 256
    send = fw.tensor(values(world.rank, count), "float32")
    recv = fw.empty(count, "float32")
    with pytest.raises(mscclpp.Error):
        coll.all_reduce(send, fw.empty(count + 1, "float32"))
    coll.all_reduce(send, recv)
    check(fw, recv, sum(values(r, count) for r in range(world.size)), "float32")
    MPI.COMM_WORLD.barrier()
