# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Python bindings of libmscclpp, with the names of the MSCCL++ 0.8 Python module.

The core (bootstrap, communicator, connections, memory, semaphores, channels, proxies), the executor
(`ExecutionPlan`, `Executor`, `DataType`, `PacketType`, the plan registry), the NpKit interface (`npkit`;
this library records no events) and, beyond the MSCCL++ module, `Collectives` on torch and cupy tensors
(`mscclpp.collectives`). `import mscclpp` needs numpy only (not even a GPU or a driver); torch and cupy
buffers are accepted where they are installed. Pointers and streams are ints; every `device_handle()` has
`.raw`, its C++ bytes.
"""

import os as _os

from . import _mscclpp
from ._mscclpp import (
    AllIBTransports,
    AllTransports,
    BaseError,
    BaseMemoryChannel,
    BaseMemoryChannelDeviceHandle,
    BasePortChannel,
    BasePortChannelDeviceHandle,
    BaseProxyService,
    Bootstrap,
    Communicator,
    Connection,
    Context,
    ContextMemoryUsage,
    CudaError,
    CuError,
    DEFAULT_FIFO_SIZE,
    DataType,
    Device,
    DeviceType,
    Endpoint,
    EndpointConfig,
    EndpointConfigIb,
    Env,
    Error,
    ErrorCode,
    ExecutionPlan,
    ExecutionPlanConstraint,
    ExecutionPlanHandle,
    ExecutionPlanRegistry,
    ExecutionRequest,
    Executor,
    Fifo,
    FifoDeviceHandle,
    Host2DeviceSemaphore,
    Host2DeviceSemaphoreDeviceHandle,
    Host2HostSemaphore,
    IbError,
    MemoryChannel,
    MemoryChannelDeviceHandle,
    MemoryDevice2DeviceSemaphore,
    MemoryDevice2DeviceSemaphoreDeviceHandle,
    NoTransports,
    PacketType,
    PortChannel,
    PortChannelDeviceHandle,
    Proxy,
    ProxyHandlerResult,
    ProxyService,
    ProxyTrigger,
    RawGpuBuffer,
    RegisteredMemory,
    Semaphore,
    SemaphoreStub,
    SysError,
    TcpBootstrap,
    Transport,
    TransportFlags,
    TriggerData,
    TriggerFlag,
    TriggerSync,
    UniqueId,
    env,
    error_to_string,
    get_host_name,
    is_nvls_supported,
    npkit,
    numa,
    shared_future_Connection,
    shared_future_RegisteredMemory,
    shared_future_Semaphore,
)
from . import collectives
from .collectives import Collectives

__version__ = _mscclpp.version()


class _Version(dict):
    """`mscclpp.version`: a dict {"version", "git_commit"} as in the reference's package, and callable as
    the core's `version()`, which returns the version string."""

    def __call__(self):
        return self["version"]


version = _Version(version=__version__, git_commit=_mscclpp.MSCCLPP_GIT_COMMIT)

_here = _os.path.dirname(_os.path.abspath(__file__))


def _include_dirs():
    """Every folder a kernel built against these headers needs on its include path."""
    installed = _os.path.join(_here, "include")
    if _os.path.isdir(installed):
        return [installed]
    from . import _build_tree

    return list(_build_tree.include_dirs)


def get_include():
    """The folder holding the mscclpp/ headers (in a build tree: the source tree's include/)."""
    return _include_dirs()[0]


def get_lib():
    """The folder holding libmscclpp.so."""
    installed = _os.path.join(_here, "lib")
    if _os.path.isdir(installed):
        return installed
    from . import _build_tree

    return _build_tree.lib_dir


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("annotations",)]
__all__ += ["__version__"]
