# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""pytest plugin for running MSCCL++'s python/test/test_mscclpp.py unchanged on this project's module
(`-p ranks_plugin`, loaded before the copy's conftest.py):

- It starts MPI and picks GPU local_rank % GPUs before the copy's conftest runs. That conftest picks GPU
  local_rank, which does not exist when several ranks share one GPU (under MPS); it only starts MPI and
  picks a GPU when MPI is not started yet, so starting it here leaves everything else as it is.
- Where the machine has no InfiniBand device, it skips the cases that need one, with that reason: those
  that take the "IB" transport parameter and the host-to-host semaphore cases, whose connections are IB
  only. With an IB device (`/sys/class/infiniband` not empty) every case runs.
"""

import os

import mpi4py

mpi4py.rc.initialize = False
mpi4py.rc.finalize = True

import cupy as cp  # noqa: E402
import pytest  # noqa: E402
from mpi4py import MPI  # noqa: E402

if not MPI.Is_initialized():
    MPI.Init()
_shared = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED, 0, MPI.INFO_NULL)
cp.cuda.Device(_shared.rank % cp.cuda.runtime.getDeviceCount()).use()
_shared.Free()

_IB_SYSFS = "/sys/class/infiniband"
_IB_ONLY_TESTS = ("test_h2h_semaphores", "test_h2h_semaphores_gil_release")


def _has_ib_device():
    return os.path.isdir(_IB_SYSFS) and len(os.listdir(_IB_SYSFS)) > 0


def _needs_ib(item):
    if item.originalname in _IB_ONLY_TESTS:
        return True
    params = getattr(item, "callspec", None)
    return params is not None and "IB" in params.params.values()


def pytest_collection_modifyitems(config, items):
    if _has_ib_device():
        return
    skip = pytest.mark.skip(reason=f"needs an InfiniBand device; {_IB_SYSFS} lists none on this machine")
    for item in items:
        if _needs_ib(item):
            item.add_marker(skip)
