# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Run as `mpirun -np N python3 -m pytest python/test`: MPI starts here, each rank picks GPU local_rank % GPUs
(when there is one), and every rank runs every test in the same order, so collective steps match up."""

import mpi4py

mpi4py.rc.initialize = False
mpi4py.rc.finalize = True

import pytest  # noqa: E402
from mpi4py import MPI  # noqa: E402

from mscclpp import _cuda  # noqa: E402
from mscclpp.comm import CommGroup  # noqa: E402

GPU_SKIP_REASON = None


def _select_gpu(local_rank):
    count = _cuda.driver().device_count()
    device = local_rank % count
    _cuda.driver().set_device(device)
    for name, use in (("torch", lambda m: m.cuda.set_device(device)), ("cupy", lambda m: m.cuda.Device(device).use())):
        try:
            use(__import__(name))
        except ImportError:
            pass


def pytest_configure(config):
    global GPU_SKIP_REASON
    if not MPI.Is_initialized():
        MPI.Init()
    shared = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED, 0, MPI.INFO_NULL)
    local_rank = shared.rank
    shared.Free()
    GPU_SKIP_REASON = _cuda.gpu_unavailable_reason()
    if GPU_SKIP_REASON is None:
        _select_gpu(local_rank)


@pytest.fixture
def world():
    """MPI.COMM_WORLD, with every rank lined up before and after the test."""
    MPI.COMM_WORLD.barrier()
    yield MPI.COMM_WORLD
    MPI.COMM_WORLD.barrier()


@pytest.fixture(scope="module")
def group():
    """A CommGroup of all ranks, bootstrapped through MPI, shared by the tests of a module."""
    MPI.COMM_WORLD.barrier()
    return CommGroup(MPI.COMM_WORLD)


@pytest.fixture(scope="session")
def gpu_session():
    """Skips, with the reason, where no GPU can be used; for fixtures of any scope."""
    if GPU_SKIP_REASON is not None:
        pytest.skip(GPU_SKIP_REASON)


@pytest.fixture
def gpu(gpu_session):
    """Skips, with the reason, where no GPU can be used."""
