# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""User kernels against mscclpp's device headers (KernelBuilder, pack) and buffer helpers that take torch
tensors, cupy arrays, DLPack or __cuda_array_interface__ objects, and numpy arrays alike."""

import ctypes
import os
import shutil
import struct
import subprocess
import tempfile

import numpy as np

from . import _cuda, _include_dirs
from ._mscclpp import RawGpuBuffer


def is_torch_tensor(obj):
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "element_size")


def _is_cupy_array(obj):
    return type(obj).__module__.startswith("cupy") and hasattr(obj, "data") and hasattr(obj.data, "ptr")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


def _dlpack_info(obj):
    capsule = obj.__dlpack__()
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    tensor = _DLTensor.from_address(get_pointer(capsule, b"dltensor"))
    elements = 1
    for i in range(tensor.ndim):
        elements *= tensor.shape[i]
    nbytes = elements * tensor.dtype.bits * tensor.dtype.lanes // 8
    # DLPack device types 1 (CPU) and 3 (CUDA host) are host memory.
    return tensor.data + tensor.byte_offset, nbytes, tensor.device.device_type not in (1, 3)


def buffer_info(obj):
    """(pointer, bytes, is_device_memory) of a buffer: a torch tensor, a cupy array, a RawGpuBuffer, an object
    with __cuda_array_interface__ or __dlpack__, or a numpy array (host memory). The buffer must be contiguous."""
    if is_torch_tensor(obj):
        return obj.data_ptr(), obj.numel() * obj.element_size(), obj.is_cuda
    if _is_cupy_array(obj):
        return obj.data.ptr, obj.nbytes, True
    if isinstance(obj, RawGpuBuffer):
        return obj.data(), obj.bytes(), True
    if isinstance(obj, np.ndarray):
        return obj.ctypes.data, obj.nbytes, False
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        elements = int(np.prod(interface["shape"], dtype=np.int64))
        return interface["data"][0], elements * np.dtype(interface["typestr"]).itemsize, True
    if hasattr(obj, "__dlpack__"):
        return _dlpack_info(obj)
    raise TypeError(f"not a buffer mscclpp understands: {type(obj).__name__}")


def buffer_ptr(obj):
    return buffer_info(obj)[0]


def buffer_nbytes(obj):
    return buffer_info(obj)[1]


class Kernel:
    """A kernel loaded from PTX with the driver, launched with a packed argument buffer."""

    CU_LAUNCH_PARAM_BUFFER_POINTER = _cuda.CU_LAUNCH_PARAM_BUFFER_POINTER
    CU_LAUNCH_PARAM_BUFFER_SIZE = _cuda.CU_LAUNCH_PARAM_BUFFER_SIZE
    CU_LAUNCH_PARAM_END = _cuda.CU_LAUNCH_PARAM_END

    def __init__(self, ptx: bytes, kernel_name: str):
        self._driver = _cuda.driver()
        self._driver.ensure_context()
        self._module = ctypes.c_void_p()
        self._driver.call("cuModuleLoadData", ctypes.byref(self._module), ptx)
        function = ctypes.c_void_p()
        self._driver.call("cuModuleGetFunction", ctypes.byref(function), self._module, kernel_name.encode())
        self._function = function
        self._launch = self._driver.lib.cuLaunchKernel

    @property
    def function(self):
        """The CUfunction, as an int."""
        return self._function.value

    def launch_kernel(self, params: bytes, nblocks: int, nthreads: int, shared: int, stream=None):
        """Launches nblocks x nthreads with `shared` bytes of dynamic shared memory on `stream` (None or 0: the
        default stream; an int; a cupy or torch stream)."""
        params = bytes(params)
        size = ctypes.c_size_t(len(params))
        config = (ctypes.c_void_p * 5)(
            Kernel.CU_LAUNCH_PARAM_BUFFER_POINTER,
            ctypes.cast(params, ctypes.c_void_p),
            Kernel.CU_LAUNCH_PARAM_BUFFER_SIZE,
            ctypes.addressof(size),
            Kernel.CU_LAUNCH_PARAM_END,
        )
        result = self._launch(self._function, nblocks, 1, 1, nthreads, 1, 1, shared, _stream_handle(stream), None,
                              config)
        if result != 0:
            raise _cuda.CuError(result, f"cuLaunchKernel failed with CUresult {result}")

    def __del__(self):
        module = getattr(self, "_module", None)
        if module is not None and module.value:
            try:
                self._driver.call("cuModuleUnload", module)
            except Exception:  # the context may be gone at interpreter exit; nothing left to free then
                pass


def _stream_handle(stream):
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    for attribute in ("cuda_stream", "ptr"):  # torch, cupy
        if hasattr(stream, attribute):
            return getattr(stream, attribute) or None
    raise TypeError(f"not a stream: {type(stream).__name__}")


class KernelBuilder:
    """Compiles `file` (in `file_dir`, default: the caller's working directory) with nvcc to PTX for the GPU
    of the current context, against mscclpp's installed headers, and loads `kernel_name` (an extern "C"
    __global__ function). Builds are cached per (file, kernel, macros) for the process."""

    kernel_map: dict = {}
    _modules: dict = {}

    def __init__(self, file: str, kernel_name: str, file_dir: str = None, macro_dict: dict = {}):
        source = os.path.abspath(os.path.join(file_dir, file) if file_dir else file)
        macros = tuple(f"-D{key}={value}" for key, value in sorted(macro_dict.items()))
        key = (source, kernel_name, macros)
        if key not in KernelBuilder.kernel_map:
            # One nvcc run per source and macros, however many kernels it holds.
            if (source, macros) not in KernelBuilder._modules:
                KernelBuilder._modules[(source, macros)] = self._compile(source, list(macros))
            KernelBuilder.kernel_map[key] = Kernel(KernelBuilder._modules[(source, macros)], kernel_name)
        self._kernel = KernelBuilder.kernel_map[key]

    @staticmethod
    def _nvcc():
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
        if cuda_home:
            return os.path.join(cuda_home, "bin", "nvcc")
        found = shutil.which("nvcc")
        if found:
            return found
        return "/usr/local/cuda/bin/nvcc"

    def _compile(self, source, macros):
        driver = _cuda.driver()
        arch = driver.compute_capability(driver.current_device())
        includes = [f"-I{d}" for d in _include_dirs()]
        with tempfile.TemporaryDirectory(prefix="mscclpp-kernel-") as tmp:
            output = os.path.join(tmp, "kernel.ptx")
            command = [self._nvcc(), "-std=c++17", "-ptx", "-Xcompiler", "-Wall,-Wextra", *includes, *macros,
                       f"--gpu-architecture=compute_{arch}", source, "-o", output]
            result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if result.returncode != 0:
                raise RuntimeError(f"nvcc failed: {' '.join(command)}\n{result.stderr}")
            with open(output, "rb") as f:
                return f.read() + b"\0"

    def get_compiled_kernel(self):
        return self._kernel


def pack(*args):
    """Packs kernel arguments back to back, with no padding: ints as 32-bit ints (bools too), ctypes scalars as
    themselves, buffers (numpy, torch, cupy, RawGpuBuffer, __cuda_array_interface__) as 64-bit pointers, device
    handles as their `.raw` bytes, bytes as they are."""
    out = bytearray()
    for arg in args:
        if isinstance(arg, (bool, int)):
            out += struct.pack("i", arg)
        elif isinstance(arg, ctypes._SimpleCData):
            out += bytes(arg)
        elif isinstance(arg, (bytes, bytearray)):
            out += arg
        elif isinstance(getattr(arg, "raw", None), bytes):
            out += arg.raw
        else:
            try:
                out += struct.pack("P", buffer_ptr(arg))
            except TypeError:
                raise TypeError(f"pack: unsupported argument type {type(arg).__name__}") from None
    return bytes(out)


class GpuBuffer:
    """A cupy array (or, without cupy, a torch tensor) over a RawGpuBuffer: GPU memory that can be exported to
    other processes, as communication buffers need."""

    def __new__(cls, shape, dtype=float, strides=None, order="C"):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if any(s <= 0 for s in shape):
            raise ValueError("Shape must be positive.")
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        raw = RawGpuBuffer(nbytes)
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            memptr = cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(raw.data(), raw.bytes(), raw), 0)
            return cp.ndarray(shape, dtype=dtype, strides=strides, order=order, memptr=memptr)
        import torch

        tensor = torch.utils.dlpack.from_dlpack(raw.to_dlpack(np.dtype(dtype).name))
        return tensor[: int(np.prod(shape))].view(shape)
