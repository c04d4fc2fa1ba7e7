# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""On a GPU: CudaIpc connections over torch and cupy buffers, RawGpuBuffer through DLPack, semaphores, memory
and port channels driven by kernels built with KernelBuilder, the FIFO and a proxy written in Python.
Every test skips, with the reason, where there is no GPU (and where torch is missing)."""

import ctypes
import os
import time

import numpy as np
import pytest

import mscclpp
from mscclpp.utils import KernelBuilder, pack

SLOT = 4096
SLOT_ARG = ctypes.c_uint64(SLOT)  # the kernels take uint64_t sizes; a plain int packs as 32 bits
THREADS = 256
KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")

KERNEL_NAMES = ["h2d_wait", "d2d_ping_pong", "memory_put", "memory_get", "memory_packets", "port_put", "fifo_push"]

pytestmark = pytest.mark.usefixtures("gpu", "kernels")


@pytest.fixture(scope="module")
def kernels(gpu_session):
    """Builds every kernel up front and lines the ranks up after: nvcc takes a while, and it must not eat into
    the bootstrap's timeouts inside the tests."""
    from mpi4py import MPI

    for name in KERNEL_NAMES:
        _kernel(name)
    MPI.COMM_WORLD.barrier()


@pytest.fixture(scope="module")
def torch(gpu_session):
    return pytest.importorskip("torch")


def _peers(group):
    return [r for r in range(group.nranks) if r != group.my_rank]


def _kernel(name):
    return KernelBuilder("channels.cu", name, file_dir=KERNELS).get_compiled_kernel()


def _on_device(torch, handles):
    """The handles' bytes, back to back, in a GPU array (kept alive by the caller)."""
    raw = b"".join(h.raw for h in handles)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).cuda()


def _pattern(torch, rank, nbytes):
    return ((torch.arange(nbytes, device="cuda") + 7 * rank + 1) % 251).to(torch.uint8)


def _slotted(torch, group):
    """A buffer of one slot per rank with this rank's slot filled in."""
    buffer = torch.zeros(group.nranks * SLOT, dtype=torch.uint8, device="cuda")
    buffer[group.my_rank * SLOT:(group.my_rank + 1) * SLOT] = _pattern(torch, group.my_rank, SLOT)
    return buffer


def _assert_all_slots(torch, group, buffer):
    torch.cuda.synchronize()
    for r in range(group.nranks):
        assert torch.equal(buffer[r * SLOT:(r + 1) * SLOT], _pattern(torch, r, SLOT)), f"slot of rank {r}"


@pytest.fixture(scope="module")
def ipc(group, gpu_session):
    return group.make_connection(_peers(group), mscclpp.Transport.CudaIpc)


def test_cudaipc_write_into_torch_tensors(torch, group, ipc):
    buffer = _slotted(torch, group)
    torch.cuda.synchronize()
    memories = group.register_tensor_with_connections(buffer, ipc)
    for peer, connection in ipc.items():
        assert connection.transport() == mscclpp.Transport.CudaIpc
        connection.write(memories[peer], group.my_rank * SLOT, memories[group.my_rank], group.my_rank * SLOT, SLOT)
        connection.flush()
    group.barrier()
    _assert_all_slots(torch, group, buffer)
    group.barrier()


def test_cudaipc_write_into_cupy_arrays(group, ipc):
    cp = pytest.importorskip("cupy")
    rank, n = group.my_rank, group.nranks
    buffer = cp.zeros(n * SLOT, dtype=cp.uint8)
    buffer[rank * SLOT:(rank + 1) * SLOT] = rank + 1
    cp.cuda.Device().synchronize()
    memories = group.register_tensor_with_connections(buffer, ipc)
    for peer, connection in ipc.items():
        connection.write(memories[peer], rank * SLOT, memories[rank], rank * SLOT, SLOT)
        connection.flush()
    group.barrier()
    for r in range(n):
        assert bool((buffer[r * SLOT:(r + 1) * SLOT] == r + 1).all()), f"slot of rank {r}"
    group.barrier()


def test_raw_gpu_buffer_to_dlpack_shares_memory_with_torch(torch):
    buffer = mscclpp.RawGpuBuffer(4096)
    assert buffer.nelems() == 4096 and buffer.bytes() >= 4096 and buffer.device_id() == torch.cuda.current_device()
    tensor = torch.utils.dlpack.from_dlpack(buffer.to_dlpack("torch.float32"))
    assert tensor.data_ptr() == buffer.data() and tensor.shape == (1024,) and tensor.dtype == torch.float32
    tensor.fill_(2.5)
    matrix = torch.utils.dlpack.from_dlpack(buffer.to_dlpack("float16", [4, 8], [16, 1]))
    assert matrix.shape == (4, 8) and matrix.stride() == (16, 1)
    del buffer  # the tensors keep the memory alive
    assert float(tensor.sum()) == 2.5 * 1024
    halves = np.array([2.5], np.float32).view(np.int16)
    assert matrix.view(torch.int16)[0, :2].tolist() == halves.tolist()


def test_to_dlpack_refuses_unknown_types_and_oversized_views():
    buffer = mscclpp.RawGpuBuffer(64)
    with pytest.raises(mscclpp.Error) as info:
        buffer.to_dlpack("torch.complex64")
    assert info.value.args[0] == mscclpp.ErrorCode.InvalidUsage
    with pytest.raises(mscclpp.Error):
        buffer.to_dlpack("float32", [17])


def test_host_to_device_semaphore(torch, group, ipc):
    semaphores = {peer: mscclpp.Host2DeviceSemaphore(group.communicator, c) for peer, c in ipc.items()}
    done = torch.zeros(len(semaphores), dtype=torch.int32, device="cuda")
    kernel = _kernel("h2d_wait")
    for i, semaphore in enumerate(semaphores.values()):
        kernel.launch_kernel(pack(semaphore.device_handle(), ctypes.c_uint64(done.data_ptr() + 4 * i)), 1, 32, 0, 0)
    group.barrier()
    for semaphore in semaphores.values():
        semaphore.signal()
        semaphore.connection().flush()
    torch.cuda.synchronize()
    assert done.tolist() == [1] * len(semaphores)
    group.barrier()


def test_device_to_device_semaphore(torch, group, ipc):
    semaphores = [mscclpp.MemoryDevice2DeviceSemaphore(group.communicator, c) for c in ipc.values()]
    handles = _on_device(torch, [s.device_handle() for s in semaphores])
    rounds = torch.zeros(len(semaphores), dtype=torch.int32, device="cuda")
    _kernel("d2d_ping_pong").launch_kernel(pack(handles, rounds, 50), len(semaphores), 32, 0, 0)
    torch.cuda.synchronize()
    assert rounds.tolist() == [50] * len(semaphores)
    group.barrier()


def test_memory_channel_put_and_signal(torch, group, ipc):
    buffer = _slotted(torch, group)
    torch.cuda.synchronize()
    channels = group.make_memory_channels(buffer, ipc)
    handles = _on_device(torch, [c.device_handle() for c in channels.values()])
    _kernel("memory_put").launch_kernel(pack(handles, SLOT_ARG, group.my_rank), len(channels), THREADS, 0, 0)
    _assert_all_slots(torch, group, buffer)
    group.barrier()


def test_memory_channel_get(torch, group, ipc):
    buffer = _slotted(torch, group)
    torch.cuda.synchronize()
    channels = group.make_memory_channels(buffer, ipc)
    handles = _on_device(torch, [c.device_handle() for c in channels.values()])
    peers = torch.tensor(list(channels), dtype=torch.int32, device="cuda")
    _kernel("memory_get").launch_kernel(pack(handles, peers, SLOT_ARG), len(channels), THREADS, 0, 0)
    _assert_all_slots(torch, group, buffer)
    group.barrier()


def test_memory_channel_packets(torch, group, ipc):
    buffer = _slotted(torch, group)
    scratch = torch.zeros(group.nranks * SLOT * 2, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    scratch_memory = group.register_local_memory(scratch, ipc)
    channels = group.make_memory_channels_with_scratch(buffer, scratch_memory, ipc)
    for channel in channels.values():
        assert channel.device_handle().packetBuffer_ == scratch.data_ptr()
    handles = _on_device(torch, [c.device_handle() for c in channels.values()])
    peers = torch.tensor(list(channels), dtype=torch.int32, device="cuda")
    args = pack(handles, peers, SLOT_ARG, group.my_rank, 1)
    _kernel("memory_packets").launch_kernel(args, len(channels), THREADS, 0, 0)
    _assert_all_slots(torch, group, buffer)
    group.barrier()


def test_port_channel_put_with_signal_and_flush(torch, group, ipc):
    buffer = _slotted(torch, group)
    torch.cuda.synchronize()
    proxy = mscclpp.ProxyService()
    channels = group.make_port_channels(proxy, buffer, ipc)
    handles = _on_device(torch, [c.device_handle() for c in channels.values()])
    proxy.start_proxy()
    _kernel("port_put").launch_kernel(pack(handles, SLOT_ARG, group.my_rank), len(channels), 32, 0, 0)
    torch.cuda.synchronize()
    proxy.stop_proxy()
    _assert_all_slots(torch, group, buffer)
    group.barrier()


def _expected_trigger(i):
    return {"size": i + 1, "src_offset": 3 * i, "dst_offset": 2 * i, "src_memory_id": (i + 1) % 512,
            "dst_memory_id": i % 512, "type": mscclpp.TriggerData, "semaphore_id": i % 1024}


def _fields(trigger):
    return {name: getattr(trigger, name) for name in _expected_trigger(0)}


def test_fifo_polled_from_python(torch):
    fifo = mscclpp.Fifo(64)
    count = 100  # more than the FIFO holds: the kernel waits for the pops below
    _kernel("fifo_push").launch_kernel(pack(fifo.device_handle(), count), 1, 32, 0, 0)
    received = []
    deadline = time.monotonic() + 30
    while len(received) < count and time.monotonic() < deadline:
        trigger = fifo.poll()
        if trigger.fst != 0 and trigger.snd != 0:
            received.append(_fields(trigger))
            fifo.pop()
    torch.cuda.synchronize()
    assert received == [_expected_trigger(i) for i in range(count)]


def test_custom_proxy_in_python(torch):
    received = []

    def handler(trigger):
        received.append(_fields(trigger))
        return mscclpp.ProxyHandlerResult.Continue

    proxy = mscclpp.Proxy(handler, fifo_size=32)
    proxy.start()
    count = 200
    _kernel("fifo_push").launch_kernel(pack(proxy.fifo().device_handle(), count), 1, 32, 0, 0)
    # The handler needs the GIL: wait in sleep (which releases it) until the kernel's pushes are all served.
    deadline = time.monotonic() + 30
    while len(received) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    torch.cuda.synchronize()
    proxy.stop()
    assert received == [_expected_trigger(i) for i in range(count)]


def test_numa_node_of_the_gpu(torch):
    node = mscclpp.numa.get_device_numa_node(torch.cuda.current_device())
    assert isinstance(node, int) and node >= -1
    mscclpp.numa.numa_bind(node)
    with pytest.raises(mscclpp.Error):
        mscclpp.numa.numa_bind(1 << 20)
