# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Host-side API without a GPU: transports, errors, env, serialization, device-handle layouts, packing."""

import ctypes
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

import mscclpp
from mscclpp.utils import pack

T = mscclpp.Transport


def test_version_matches_the_headers():
    assert re.fullmatch(r"\d+\.\d+\.\d+", mscclpp.__version__)
    major, minor, patch = (int(x) for x in mscclpp.__version__.split("."))
    assert major * 10000 + minor * 100 + patch == mscclpp._mscclpp.MSCCLPP_VERSION
    assert mscclpp.version() == mscclpp.__version__
    assert mscclpp.version["version"] == mscclpp.__version__


def test_get_include_and_get_lib_point_at_headers_and_library():
    assert os.path.isfile(os.path.join(mscclpp.get_include(), "mscclpp", "core.hpp"))
    assert any(name.startswith("libmscclpp.so") for name in os.listdir(mscclpp.get_lib()))


def test_transport_values_follow_the_cpp_enum():
    assert int(T.Unknown) == 0 and int(T.CudaIpc) == 1
    assert [int(getattr(T, f"IB{i}")) for i in range(8)] == list(range(2, 10))
    assert int(T.Ethernet) == 10 and int(T.NumTransports) == 11


def test_transport_flags_set_operations():
    flags = T.CudaIpc | T.IB0
    assert isinstance(flags, mscclpp.TransportFlags)
    assert flags.has(T.CudaIpc) and flags.has(T.IB0) and not flags.has(T.Ethernet)
    assert flags.count() == 2 and flags.any() and not flags.none() and not flags.all()
    assert (flags & T.IB0) == mscclpp.TransportFlags(T.IB0)
    assert (flags ^ T.CudaIpc) == T.IB0
    assert (flags | mscclpp.TransportFlags(T.Ethernet)).count() == 3
    assert (T.Ethernet | flags).count() == 3
    assert (~flags).count() == 11 - 2
    assert mscclpp.TransportFlags().none()
    assert mscclpp.AllIBTransports.count() == 8
    assert mscclpp.AllTransports.count() == 10 and not mscclpp.AllTransports.has(T.Unknown)
    assert flags != mscclpp.NoTransports


def test_transport_flags_in_place_operators():
    flags = mscclpp.TransportFlags()
    flags |= T.Ethernet
    flags |= mscclpp.TransportFlags(T.IB3)
    assert flags.count() == 2
    flags &= T.IB3
    assert flags == T.IB3
    flags ^= T.IB3
    assert flags.none()
    assert len({mscclpp.TransportFlags(T.IB3), T.IB3 | T.IB3}) == 1


def test_device_and_endpoint_config():
    device = mscclpp.Device(mscclpp.DeviceType.GPU, 3)
    assert device.type == mscclpp.DeviceType.GPU and device.id == 3
    device.id = 1
    assert "1" in str(device)
    config = mscclpp.EndpointConfig(T.Ethernet, mscclpp.DeviceType.CPU, max_write_queue_size=5)
    assert config.transport == T.Ethernet
    assert config.device.type == mscclpp.DeviceType.CPU
    assert config.max_write_queue_size == 5
    assert config.ib.max_cq_size == 1024 and config.ib_max_send_wr == 8192
    config.ib_gid_index = 3
    assert config.ib.gid_index == 3
    ib = mscclpp.EndpointConfigIb(device_index=2, port=1)
    assert (ib.device_index, ib.port, ib.gid_index, ib.max_cq_poll_num, ib.max_wr_per_send) == (2, 1, 0, 1, 64)
    assert mscclpp.EndpointConfig(T.CudaIpc).device.type == mscclpp.DeviceType.GPU


def test_error_codes_compare_equal_to_ints():
    E = mscclpp.ErrorCode
    names = ["SystemError", "InternalError", "RemoteError", "InvalidUsage", "Timeout", "Aborted", "ExecutorError"]
    for value, name in enumerate(names):
        assert getattr(E, name) == value and value == getattr(E, name)
        assert mscclpp.error_to_string(getattr(E, name)) == name
    assert E.Timeout != E.Aborted and E.Timeout != 5
    assert {E.Timeout: "t"}[4] == "t"


def test_error_classes_form_one_hierarchy():
    for cls in (mscclpp.Error, mscclpp.SysError, mscclpp.CudaError, mscclpp.CuError, mscclpp.IbError):
        assert issubclass(cls, mscclpp.BaseError)
    assert issubclass(mscclpp.BaseError, RuntimeError)


def test_cpp_errors_arrive_with_code_and_message():
    with pytest.raises(mscclpp.Error) as info:
        mscclpp.RegisteredMemory.deserialize(b"not a registered memory")
    code, message = info.value.args
    assert code == mscclpp.ErrorCode.InvalidUsage and isinstance(code, int)
    assert "InvalidUsage" in message


def test_env_reads_the_environment_of_the_process():
    script = "import mscclpp; e = mscclpp.env(); print(e.bootstrap_timeout_sec, e.log_level, e.hostid)"
    environment = dict(os.environ, MSCCLPP_BOOTSTRAP_TIMEOUT="17", MSCCLPP_LOG_LEVEL="WARN", MSCCLPP_HOSTID="h1")
    out = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["17", "WARN", "h1"]


def test_env_fields_are_read_only():
    e = mscclpp.env()
    assert isinstance(e.disable_channel_cache, bool) and isinstance(e.ipc_handle_types, str)
    with pytest.raises(AttributeError):
        e.log_level = "DEBUG"


def test_registered_memory_round_trip_in_process():
    context = mscclpp.Context.create()
    buffer = np.arange(64, dtype=np.uint8)
    memory = context.register_memory(buffer.ctypes.data, buffer.nbytes, T.Ethernet)
    copy = mscclpp.RegisteredMemory.deserialize(memory.serialize())
    assert copy.size() == buffer.nbytes
    assert copy.transports() == T.Ethernet
    assert copy.original_data_ptr() == buffer.ctypes.data
    assert copy.data() == buffer.ctypes.data
    assert copy.serialize() == memory.serialize()


def test_endpoint_round_trip():
    context = mscclpp.Context.create()
    endpoint = context.create_endpoint(mscclpp.EndpointConfig(T.Ethernet, mscclpp.DeviceType.CPU))
    copy = mscclpp.Endpoint.deserialize(endpoint.serialize())
    assert copy.transport() == T.Ethernet
    assert copy.device().type == mscclpp.DeviceType.CPU
    assert copy.host_hash() == endpoint.host_hash() and copy.pid_hash() == endpoint.pid_hash()
    with pytest.raises(mscclpp.Error):
        mscclpp.Endpoint.deserialize(endpoint.serialize()[:-3])


def _field(handle, name, value):
    setattr(handle, name, value)
    assert getattr(handle, name) == value


LAYOUTS = [
    # (class, size, [(pointer field, offset)])
    (mscclpp.FifoDeviceHandle, 40, [("triggers", 0), ("head", 8), ("tail", 16), ("tail_cache", 24)]),
    (mscclpp.Host2DeviceSemaphore.DeviceHandle, 16, [("inbound_token", 0), ("expected_inbound_token", 8)]),
    (mscclpp.MemoryDevice2DeviceSemaphore.DeviceHandle, 32,
     [("inbound_token", 0), ("outbound_token", 8), ("remote_inbound_token", 16), ("expected_inbound_token", 24)]),
    (mscclpp.MemoryChannelDeviceHandle, 56, [("dst_", 32), ("src_", 40), ("packetBuffer_", 48)]),
    (mscclpp.BaseMemoryChannelDeviceHandle, 32, []),
    (mscclpp.BasePortChannelDeviceHandle, 64, []),
    (mscclpp.PortChannelDeviceHandle, 72, []),
]


@pytest.mark.parametrize("cls,size,fields", LAYOUTS, ids=[c[0].__name__ for c in LAYOUTS])
def test_device_handle_raw_is_the_cpp_struct(cls, size, fields):
    handle = cls()
    assert cls.size_in_bytes == size and len(handle.raw) == size
    for i, (name, offset) in enumerate(fields):
        value = 0x1000 * (i + 1) + 8
        _field(handle, name, value)
        assert struct.unpack_from("Q", handle.raw, offset)[0] == value


def test_nested_handle_fields_write_through():
    port = mscclpp.PortChannelDeviceHandle()
    port.semaphore_id_ = 7
    port.semaphore_.inbound_token = 0xA0
    port.fifo_.tail = 0xB0
    port.fifo_.size = 512
    port.dst_ = 3
    port.src_ = 4
    raw = port.raw
    assert struct.unpack_from("I", raw, 0)[0] == 7
    assert struct.unpack_from("Q", raw, 8)[0] == 0xA0
    assert struct.unpack_from("Q", raw, 24 + 16)[0] == 0xB0
    assert struct.unpack_from("i", raw, 24 + 32)[0] == 512
    assert struct.unpack_from("II", raw, 64) == (3, 4)
    memory = mscclpp.MemoryChannelDeviceHandle()
    memory.semaphore_.remote_inbound_token = 0xC0
    assert struct.unpack_from("Q", memory.raw, 16)[0] == 0xC0


def test_raw_can_be_written_back():
    handle = mscclpp.MemoryDevice2DeviceSemaphore.DeviceHandle()
    handle.raw = struct.pack("4Q", 1, 2, 3, 4)
    assert (handle.inbound_token, handle.outbound_token, handle.remote_inbound_token,
            handle.expected_inbound_token) == (1, 2, 3, 4)
    with pytest.raises(ValueError):
        handle.raw = b"\0" * 31


def test_proxy_trigger_fields_decode_the_bits():
    trigger = mscclpp.ProxyTrigger()
    assert len(trigger.raw) == 32
    size, src_offset, dst_offset, src_id, dst_id, kind, sem = 100, 200, 300, 5, 6, 3, 9
    trigger.fst = size | (src_offset << 32)
    trigger.snd = dst_offset | (src_id << 32) | (dst_id << 41) | (kind << 50) | (sem << 53)
    assert (trigger.size, trigger.src_offset, trigger.dst_offset) == (size, src_offset, dst_offset)
    assert (trigger.src_memory_id, trigger.dst_memory_id, trigger.type, trigger.semaphore_id) == (5, 6, 3, 9)
    assert struct.unpack_from("QQ", trigger.raw, 0) == (trigger.fst, trigger.snd)


def test_pack_lays_arguments_back_to_back():
    handle = mscclpp.Host2DeviceSemaphore.DeviceHandle()
    handle.inbound_token = 0x1234
    array = np.zeros(4, dtype=np.int32)
    packed = pack(handle, array, ctypes.c_size_t(9), 5, True, b"xy")
    expected = handle.raw + struct.pack("P", array.ctypes.data) + struct.pack("N", 9) + struct.pack("ii", 5, 1)
    assert packed == expected + b"xy"
    with pytest.raises(TypeError):
        pack(object())


def test_get_host_name_cuts_at_the_delimiter():
    import socket

    host = socket.gethostname()
    assert mscclpp.get_host_name(1024, ".") == host.split(".")[0]
    assert mscclpp.get_host_name(2, ".") == host.split(".")[0][:2]
