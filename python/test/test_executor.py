# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""The executor's bindings under MSCCL++'s names (plans read without a GPU; a plan run on one), the npkit
submodule, errors whose message is not UTF-8, and bad input from Python: TransportFlags of a value that is
no transport, and DLPack views of a RawGpuBuffer whose extent overflows."""

import os

import numpy as np
import pytest

import mscclpp
from mscclpp import DataType, ExecutionPlan, Executor, PacketType, npkit

PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "executor-plans")


def test_reference_names_exist():
    """Every name MSCCL++'s test_mscclpp.py imports from the package, and the enum members it uses."""
    for name in ("DataType", "ExecutionPlan", "Executor", "PacketType", "npkit", "env", "Device", "DeviceType"):
        assert hasattr(mscclpp, name), name
    assert [DataType.int32, DataType.uint32, DataType.float16, DataType.float32, DataType.bfloat16]
    assert int(DataType.float16) == 2 and int(PacketType.LL16) == 1
    assert callable(npkit.init) and callable(npkit.dump) and callable(npkit.shutdown)


def test_npkit_runs_without_recording():
    """The library records no NpKit events: the calls succeed and no trace file is written."""
    dump_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"npkit-{os.getpid()}")
    os.makedirs(dump_dir, exist_ok=True)
    npkit.init(0)
    npkit.dump(dump_dir)
    npkit.shutdown()
    assert os.listdir(dump_dir) == []
    os.rmdir(dump_dir)


def test_execution_plan_properties():
    plan = ExecutionPlan(os.path.join(PLANS, "allgather_2ranks.json"), 0)
    assert plan.collective == "allgather"
    assert plan.name
    assert 0 <= plan.min_message_size <= plan.max_message_size
    assert isinstance(plan.is_in_place, bool)


def test_execution_plan_of_a_directory_says_so():
    with pytest.raises(mscclpp.Error, match="is a directory"):
        ExecutionPlan(PLANS, 0)


def test_error_message_with_non_utf8_bytes_arrives_as_mscclpp_error():
    """A path given as bytes that are not UTF-8 is quoted in the C++ message; the caller still gets
    mscclpp.Error (the bytes escaped), not a UnicodeDecodeError raised while translating it."""
    with pytest.raises(mscclpp.Error) as raised:
        ExecutionPlan(b"/nonexistent-\xff\xfe/plan.json", 0)
    code, message = raised.value.args
    assert code == mscclpp.ErrorCode.ExecutorError
    assert "\\xff\\xfe" in message


def test_transport_flags_of_no_transport_raise():
    for value in (64, int(mscclpp.Transport.NumTransports), 1 << 20):
        with pytest.raises(mscclpp.Error, match="is not a transport"):
            mscclpp.TransportFlags(mscclpp.Transport(value))
    assert mscclpp.TransportFlags(mscclpp.Transport.Ethernet).has(mscclpp.Transport.Ethernet)


@pytest.mark.parametrize(
    "shape,strides",
    [([2**61 + 1], [8]), ([2**32, 2**32], []), ([2**32, 2**32], [2**32, 1]), ([2, 2**62], [2**62, 2])],
    ids=["2^61+1 at stride 8", "2^32 x 2^32 compact", "2^32 x 2^32 strided", "stride product"],
)
def test_to_dlpack_refuses_views_whose_extent_overflows(gpu, shape, strides):
    buffer = mscclpp.RawGpuBuffer(4096)
    with pytest.raises(mscclpp.Error, match="overflows 64 bits"):
        buffer.to_dlpack("float64", shape, strides)


def test_to_dlpack_refuses_negative_strides_and_views_past_the_end(gpu):
    buffer = mscclpp.RawGpuBuffer(4096)
    with pytest.raises(mscclpp.Error, match="negative stride"):
        buffer.to_dlpack("float32", [4], [-1])
    with pytest.raises(mscclpp.Error, match="needs 4100 bytes"):
        buffer.to_dlpack("float32", [1025])
    buffer.to_dlpack("float32", [32, 32])  # exactly the buffer: accepted


def test_executor_runs_a_plan(gpu, group, world):
    """An in-place all-reduce plan of MSCCL++'s executor format, run the way its test runs it."""
    cupy = pytest.importorskip("cupy")
    name = f"allreduce_twoshot_inplace_{world.size}ranks.json"
    if not os.path.exists(os.path.join(PLANS, name)):
        pytest.skip(f"no {name} in test/executor-plans")
    plan = ExecutionPlan(os.path.join(PLANS, name), world.rank)
    executor = Executor(group.communicator)
    count = 1 << 16
    inputs = [np.arange(count, dtype=np.float32) % 13 + r for r in range(world.size)]
    buffer = cupy.asarray(inputs[world.rank])
    stream = cupy.cuda.Stream(non_blocking=True)
    executor.execute(world.rank, buffer.data.ptr, buffer.data.ptr, buffer.nbytes, buffer.nbytes, DataType.float32,
                     plan, stream.ptr, PacketType.LL16)
    stream.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(buffer), sum(inputs))
