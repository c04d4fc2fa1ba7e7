# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""The few CUDA driver calls the pure-Python helpers need (module loading, launches, device queries),
through ctypes on libcuda, so that neither cupy nor torch is required. Loaded on first use: importing
mscclpp works on machines without a driver."""

import ctypes
import functools

from ._mscclpp import CuError

CU_LAUNCH_PARAM_END = 0x00
CU_LAUNCH_PARAM_BUFFER_POINTER = 0x01
CU_LAUNCH_PARAM_BUFFER_SIZE = 0x02
_ATTR_COMPUTE_CAPABILITY_MAJOR = 75
_ATTR_COMPUTE_CAPABILITY_MINOR = 76


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        c_int, c_uint, c_void_p, c_size_t = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_size_t
        self._declare("cuInit", [c_uint])
        self._declare("cuDeviceGetCount", [ctypes.POINTER(c_int)])
        self._declare("cuDeviceGet", [ctypes.POINTER(c_int), c_int])
        self._declare("cuDeviceGetAttribute", [ctypes.POINTER(c_int), c_int, c_int])
        self._declare("cuDevicePrimaryCtxRetain", [ctypes.POINTER(c_void_p), c_int])
        self._declare("cuCtxGetCurrent", [ctypes.POINTER(c_void_p)])
        self._declare("cuCtxSetCurrent", [c_void_p])
        self._declare("cuCtxGetDevice", [ctypes.POINTER(c_int)])
        self._declare("cuCtxSynchronize", [])
        self._declare("cuModuleLoadData", [ctypes.POINTER(c_void_p), ctypes.c_char_p])
        self._declare("cuModuleUnload", [c_void_p])
        self._declare("cuModuleGetFunction", [ctypes.POINTER(c_void_p), c_void_p, ctypes.c_char_p])
        self._declare("cuStreamSynchronize", [c_void_p])
        self._declare("cuMemcpyHtoD_v2", [ctypes.c_uint64, c_void_p, c_size_t])
        self._declare("cuMemcpyDtoH_v2", [c_void_p, ctypes.c_uint64, c_size_t])
        self._declare(
            "cuLaunchKernel",
            [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p, c_void_p, c_void_p],
        )
        self.call("cuInit", 0)

    def _declare(self, name, argtypes):
        fn = getattr(self.lib, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int

    def address_of(self, name):
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value

    def call(self, name, *args):
        result = getattr(self.lib, name)(*args)
        if result != 0:
            raise CuError(result, f"{name} failed with CUresult {result}")

    def device_count(self):
        count = ctypes.c_int(0)
        self.call("cuDeviceGetCount", ctypes.byref(count))
        return count.value

    def current_device(self):
        """The device of the current context, making device 0's primary context current if none is."""
        self.ensure_context()
        device = ctypes.c_int(0)
        self.call("cuCtxGetDevice", ctypes.byref(device))
        return device.value

    def set_device(self, index):
        """Makes `index`'s primary context current on this thread (the one the CUDA runtime uses too)."""
        device = ctypes.c_int(0)
        self.call("cuDeviceGet", ctypes.byref(device), index)
        context = ctypes.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
        self.call("cuCtxSetCurrent", context)

    def ensure_context(self):
        context = ctypes.c_void_p()
        self.call("cuCtxGetCurrent", ctypes.byref(context))
        if not context.value:
            self.set_device(0)

    def compute_capability(self, index):
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        self.call("cuDeviceGetAttribute", ctypes.byref(major), _ATTR_COMPUTE_CAPABILITY_MAJOR, index)
        self.call("cuDeviceGetAttribute", ctypes.byref(minor), _ATTR_COMPUTE_CAPABILITY_MINOR, index)
        return major.value * 10 + minor.value


@functools.lru_cache(maxsize=None)
def driver():
    """The driver, or raises OSError (no libcuda) or CuError (no usable device)."""
    return Driver()


def gpu_unavailable_reason():
    """None when a GPU can be used, else why not (for pytest skips)."""
    try:
        count = driver().device_count()
    except OSError as e:
        return f"no CUDA driver ({e})"
    except CuError as e:
        return f"no usable GPU ({e.args[1]})"
    return None if count > 0 else "no GPU"
