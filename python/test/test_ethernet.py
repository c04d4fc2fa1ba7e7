# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Communicator, connections and Host2HostSemaphore over Ethernet into numpy buffers (no GPU needed)."""

import threading

import numpy as np
import pytest

import mscclpp

CPU_ETHERNET = mscclpp.EndpointConfig(mscclpp.Transport.Ethernet, mscclpp.DeviceType.CPU)
SLOT = 256


def _peers(group):
    return [r for r in range(group.nranks) if r != group.my_rank]


@pytest.fixture(scope="module")
def connections(group):
    return group.make_connection(_peers(group), CPU_ETHERNET)


def test_connections_report_their_transport(group, connections):
    assert sorted(connections) == _peers(group)
    for rank, connection in connections.items():
        assert connection.transport() == mscclpp.Transport.Ethernet
        assert connection.remote_transport() == mscclpp.Transport.Ethernet
        assert connection.local_device().type == mscclpp.DeviceType.CPU
        assert group.communicator.remote_rank_of(connection) == rank
        assert group.communicator.tag_of(connection) == 0


def test_write_and_host_semaphore_deliver_into_numpy(group, connections):
    rank, n = group.my_rank, group.nranks
    buffer = np.zeros(n * SLOT, dtype=np.uint8)
    buffer[rank * SLOT:(rank + 1) * SLOT] = (np.arange(SLOT) + rank) % 251
    memories = group.register_tensor_with_connections(buffer, connections)
    semaphores = {r: mscclpp.Host2HostSemaphore(s) for r, s in group.make_semaphores(connections).items()}
    local = memories[rank]
    for peer, connection in connections.items():
        connection.write(memories[peer], rank * SLOT, local, rank * SLOT, SLOT)
        connection.flush()
        semaphores[peer].signal()
    for peer in connections:
        semaphores[peer].wait()
    for r in range(n):
        assert (buffer[r * SLOT:(r + 1) * SLOT] == (np.arange(SLOT) + r) % 251).all(), f"slot of rank {r}"
    group.barrier()


def test_update_and_sync_sets_the_local_word_and_the_remote_one(group, connections):
    rank = group.my_rank
    words = np.zeros(group.nranks, dtype=np.uint64)
    source = np.zeros(1, dtype=np.uint64)
    memories = group.register_tensor_with_connections(words, connections)
    semaphores = {r: mscclpp.Host2HostSemaphore(group.communicator, c) for r, c in connections.items()}
    for peer, connection in connections.items():
        connection.update_and_sync(memories[peer], rank * 8, source.ctypes.data, 1000 + rank)
        assert source[0] == 1000 + rank
        connection.flush()
        semaphores[peer].signal()
    for peer in connections:
        semaphores[peer].wait()
        assert words[peer] == 1000 + peer
    group.barrier()


def test_host_semaphore_poll_consumes_one_signal(group, connections):
    semaphores = {r: mscclpp.Host2HostSemaphore(group.communicator, c) for r, c in connections.items()}
    group.barrier()
    for semaphore in semaphores.values():
        assert not semaphore.poll()
    group.barrier()
    for semaphore in semaphores.values():
        semaphore.signal()
    for semaphore in semaphores.values():
        semaphore.wait()
        assert not semaphore.poll()
    group.barrier()


def test_host_semaphore_wait_times_out_without_a_signal(group, connections):
    semaphores = {r: mscclpp.Host2HostSemaphore(group.communicator, c) for r, c in connections.items()}
    for semaphore in semaphores.values():
        with pytest.raises(mscclpp.Error) as info:
            semaphore.wait(max_spin_count=1000)
        assert info.value.args[0] == mscclpp.ErrorCode.Timeout
    group.barrier()


def test_host_semaphore_wait_releases_the_gil(group, connections):
    """A thread waits for a peer's signal while this thread keeps running Python; the peers signal only after
    every rank has checked that its waiter is still waiting."""
    semaphores = {r: mscclpp.Host2HostSemaphore(group.communicator, c) for r, c in connections.items()}
    peer = next(iter(semaphores))
    waiter = threading.Thread(target=semaphores[peer].wait, kwargs={"max_spin_count": -1}, daemon=True)
    waiter.start()
    ticks = sum(1 for _ in range(200000))
    waiting_while_python_ran = ticks == 200000 and waiter.is_alive()
    group.barrier()
    for semaphore in semaphores.values():
        semaphore.signal()
    waiter.join(timeout=30)
    assert waiting_while_python_ran
    assert not waiter.is_alive()
    for r, semaphore in semaphores.items():
        if r != peer:
            semaphore.wait()
    group.barrier()


def test_semaphore_stub_round_trip(group, connections):
    connection = next(iter(connections.values()))
    stub = mscclpp.SemaphoreStub(connection)
    copy = mscclpp.SemaphoreStub.deserialize(stub.serialize())
    assert copy.memory().size() == stub.memory().size() == 8
    assert copy.serialize() == stub.serialize()
    with pytest.raises(mscclpp.Error):
        mscclpp.SemaphoreStub.deserialize(b"\1\2\3")


def test_write_out_of_range_is_refused(group, connections):
    buffer = np.zeros(64, dtype=np.uint8)
    memories = group.register_tensor_with_connections(buffer, connections)
    peer, connection = next(iter(connections.items()))
    with pytest.raises(mscclpp.Error) as info:
        connection.write(memories[peer], 32, memories[group.my_rank], 0, 64)
    assert info.value.args[0] == mscclpp.ErrorCode.InvalidUsage
    group.barrier()
