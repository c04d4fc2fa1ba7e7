# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""TcpBootstrap through Python: unique ids and ip:port, tagged messages, all_gather, barrier, the GIL."""

import os
import pickle
import socket
import tempfile
import threading
import time

import numpy as np
import pytest

import mscclpp
from mscclpp.comm import CommGroup


def _bootstrap_with_unique_id(world):
    bootstrap = mscclpp.TcpBootstrap.create(world.rank, world.size)
    unique_id = mscclpp.TcpBootstrap.create_unique_id() if world.rank == 0 else None
    bootstrap.initialize(world.bcast(unique_id, 0), timeout_sec=20)
    return bootstrap


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unique_id_bootstrap_knows_ranks(world):
    bootstrap = _bootstrap_with_unique_id(world)
    assert bootstrap.get_rank() == world.rank
    assert bootstrap.get_n_ranks() == world.size
    assert bootstrap.get_n_ranks_per_node() == world.size


def test_unique_id_pickles_to_the_same_id():
    unique_id = mscclpp.TcpBootstrap.create_unique_id()
    copy = pickle.loads(pickle.dumps(unique_id))
    assert copy == unique_id
    assert bytes(copy) == bytes(unique_id)
    assert len(bytes(unique_id)) == 128
    assert mscclpp.UniqueId(bytes(unique_id)) == unique_id


def test_unique_id_of_wrong_length_is_refused():
    with pytest.raises(mscclpp.Error) as info:
        mscclpp.UniqueId(b"\0" * 127)
    assert info.value.args[0] == mscclpp.ErrorCode.InvalidUsage


def test_ip_port_bootstrap(world):
    address = world.bcast(f"127.0.0.1:{_free_port()}" if world.rank == 0 else None, 0)
    group = CommGroup(interfaceIpPortTrio=address, rank=world.rank, size=world.size)
    assert group.my_rank == world.rank
    assert group.nranks == world.size
    group.barrier()


def test_tagged_messages_match_by_tag(world):
    bootstrap = _bootstrap_with_unique_id(world)
    n, rank = world.size, world.rank
    right, left = (rank + 1) % n, (rank - 1) % n
    first = np.full(4, rank * 10 + 1, dtype=np.int32)
    second = np.full(4, rank * 10 + 2, dtype=np.int32)
    bootstrap.send(first.ctypes.data, first.nbytes, right, 1)
    bootstrap.send(second.ctypes.data, second.nbytes, right, 2)
    got_second = np.zeros(4, dtype=np.int32)
    got_first = np.zeros(4, dtype=np.int32)
    # Tag 2 is received first: tags are independent streams.
    bootstrap.recv(got_second.ctypes.data, got_second.nbytes, left, 2)
    bootstrap.recv(got_first.ctypes.data, got_first.nbytes, left, 1)
    assert (got_first == left * 10 + 1).all()
    assert (got_second == left * 10 + 2).all()


def test_bytes_messages_carry_their_length(world):
    bootstrap = _bootstrap_with_unique_id(world)
    n, rank = world.size, world.rank
    bootstrap.send(b"x" * (rank + 3), (rank + 1) % n, 7)
    received = bytearray()
    bootstrap.recv(received, (rank - 1) % n, 7)
    assert bytes(received) == b"x" * ((rank - 1) % n + 3)


def test_bytes_message_into_a_buffer_of_another_size_is_refused(world):
    bootstrap = _bootstrap_with_unique_id(world)
    n, rank = world.size, world.rank
    bootstrap.send(b"abcd", (rank + 1) % n, 3)
    too_small = np.zeros(2, dtype=np.uint8)
    with pytest.raises(mscclpp.Error) as info:
        bootstrap.recv(too_small, (rank - 1) % n, 3)
    assert info.value.args[0] == mscclpp.ErrorCode.InvalidUsage


def test_all_gather(world):
    bootstrap = _bootstrap_with_unique_id(world)
    slot = 5
    data = np.zeros(world.size * slot, dtype=np.int64)
    data[world.rank * slot:(world.rank + 1) * slot] = np.arange(slot) + 100 * world.rank
    bootstrap.all_gather(data.ctypes.data, slot * data.itemsize)
    expected = np.concatenate([np.arange(slot) + 100 * r for r in range(world.size)])
    assert (data == expected).all()
    again = np.zeros_like(data)
    again[world.rank * slot:(world.rank + 1) * slot] = 7 * world.rank
    bootstrap.all_gather(again, slot * again.itemsize)
    assert (again == np.repeat(7 * np.arange(world.size), slot)).all()


def test_barrier_waits_for_the_last_rank(world):
    bootstrap = _bootstrap_with_unique_id(world)
    marker = world.bcast(os.path.join(tempfile.mkdtemp(), "arrived") if world.rank == 0 else None, 0)
    if world.rank == 0:
        time.sleep(0.3)
        open(marker, "w").close()
    bootstrap.barrier()
    assert os.path.exists(marker)
    world.barrier()
    if world.rank == 0:
        os.remove(marker)


def test_initialize_releases_the_gil():
    """Rank 0 of a two-rank group waits in initialize on another thread; this thread keeps running Python
    meanwhile and then joins as rank 1. Holding the GIL in initialize would stall the counting loop."""
    unique_id = mscclpp.TcpBootstrap.create_unique_id()
    rank0 = mscclpp.TcpBootstrap.create(0, 2)
    errors = []

    def join_as_rank0():
        try:
            rank0.initialize(unique_id, timeout_sec=10)
        except Exception as e:  # reported by the assertion below
            errors.append(e)

    waiter = threading.Thread(target=join_as_rank0)
    waiter.start()
    iterations = 0
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        iterations += 1
    assert waiter.is_alive(), "initialize returned before rank 1 joined"
    assert iterations > 1000
    rank1 = mscclpp.TcpBootstrap.create(1, 2)
    rank1.initialize(unique_id, timeout_sec=10)
    waiter.join(timeout=15)
    assert not waiter.is_alive()
    assert errors == []
    assert rank0.get_n_ranks() == 2 and rank1.get_rank() == 1


def test_initialize_times_out_with_the_timeout_code():
    unique_id = mscclpp.TcpBootstrap.create_unique_id()
    lonely = mscclpp.TcpBootstrap.create(0, 2)
    with pytest.raises(mscclpp.Error) as info:
        lonely.initialize(unique_id, timeout_sec=1)
    assert info.value.args[0] == mscclpp.ErrorCode.Timeout
