"""Arrays of other libraries seen as C tensors (opsched_tensor), without copying them.

Accepted: torch tensors (read directly), objects with __cuda_array_interface__ (CuPy,
Numba), with __array_interface__ (NumPy, on the CPU) or with __dlpack__. Outputs are
allocated by the library of the input they are made like (numpy, torch or cupy)."""

import contextlib
import ctypes
import sys

from opsched import _lib
from opsched.errors import Error, InvalidArgumentError

# NumPy / CUDA array interface type strings (little-endian or not applicable).
_TYPESTRS = {"f4": _lib.F32, "f2": _lib.F16, "i4": _lib.I32, "i8": _lib.I64}
_ITEMSIZE = {_lib.F32: 4, _lib.F16: 2, _lib.BF16: 2, _lib.I32: 4, _lib.I64: 8}
_NAME_TO_DTYPE = {"float32": _lib.F32, "float16": _lib.F16, "bfloat16": _lib.BF16,
                  "int32": _lib.I32, "int64": _lib.I64}


class View:
    """A C tensor over an array's memory, and how to allocate arrays like it."""

    def __init__(self, array, what, data, dtype, shape, strides, device, readonly=False,
                 kind="other", keepalive=None):
        self.array = array
        self.what = what
        self.dtype = dtype
        self.shape = tuple(map(int, shape))
        self.strides = tuple(map(int, strides))
        self.device = device  # (device type, index)
        self.readonly = readonly
        self.kind = kind      # "numpy", "torch", "cupy" or "other"
        self._keepalive = keepalive
        rank = len(self.shape)
        self._shape = (ctypes.c_int64 * max(rank, 1))(*self.shape)
        self._strides = (ctypes.c_int64 * max(rank, 1))(*self.strides)
        self.c = _lib.Tensor(data, dtype, rank, self._shape, self._strides, device[0], device[1])

    @property
    def data(self):
        return self.c.data

    @property
    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def is_contiguous(self):
        """Row-major dense (strides of size-1 dimensions do not count)."""
        if self.numel == 0:
            return True
        want = _contiguous_strides(self.shape)
        return all(d == 1 or s == w for d, s, w in zip(self.shape, self.strides, want))

    def describe(self):
        return f"{_lib.DTYPE_NAMES[self.dtype]}{list(self.shape)} on {device_name(self.device)}"


def device_name(device):
    kind, index = device
    return "cpu" if kind == _lib.CPU else f"{_lib.DEVICE_NAMES[kind]}:{index}"


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _is_cupy(x):
    return type(x).__module__.split(".")[0] == "cupy"


def _element_strides(byte_strides, itemsize, what):
    out = []
    for s in byte_strides:
        if s < 0:
            raise InvalidArgumentError(f"{what} has a negative stride ({s} bytes); opsched does not copy "
                                       "inputs: pass a view with non-negative strides")
        if s % itemsize:
            raise InvalidArgumentError(f"{what} has a stride of {s} bytes, not a multiple of its "
                                       f"element size {itemsize}")
        out.append(s // itemsize)
    return out


def _contiguous_strides(shape):
    strides, running = [], 1
    for d in reversed(shape):
        strides.append(running)
        running *= max(int(d), 1)
    return list(reversed(strides))


def _dtype_of_typestr(typestr, array, what):
    if typestr[0] == ">":
        raise InvalidArgumentError(f"{what} is big-endian ({typestr}); opsched takes native byte order")
    if typestr[1:] in _TYPESTRS:
        return _TYPESTRS[typestr[1:]]
    name = str(getattr(array, "dtype", typestr))
    if name in _NAME_TO_DTYPE:
        return _NAME_TO_DTYPE[name]
    raise InvalidArgumentError(f"{what} has dtype {name}; opsched takes float32, float16, bfloat16, "
                               "int32 or int64")


def _from_interface(x, iface, device, what, kind):
    dtype = _dtype_of_typestr(iface["typestr"], x, what)
    shape = tuple(iface["shape"])
    data, readonly = iface["data"]
    if iface.get("strides") is None:
        strides = _contiguous_strides(shape)
    else:
        strides = _element_strides(iface["strides"], _ITEMSIZE[dtype], what)
    if iface.get("mask") is not None:
        raise InvalidArgumentError(f"{what} is a masked array")
    return View(x, what, data, dtype, shape, strides, device, readonly, kind)


_torch_dtypes = None


def _from_torch(x, what):
    global _torch_dtypes
    import torch  # only when the caller passed a torch tensor

    if _torch_dtypes is None:
        _torch_dtypes = {torch.float32: _lib.F32, torch.float16: _lib.F16, torch.bfloat16: _lib.BF16,
                         torch.int32: _lib.I32, torch.int64: _lib.I64}
    names = _torch_dtypes
    if x.dtype not in names:
        raise InvalidArgumentError(f"{what} has dtype {x.dtype}; opsched takes float32, float16, bfloat16, "
                                   "int32 or int64")
    if x.layout != torch.strided:
        raise InvalidArgumentError(f"{what} has layout {x.layout}; opsched takes strided tensors")
    if x.is_conj() or x.is_neg():
        raise InvalidArgumentError(f"{what} has a lazy conjugate or negation bit; resolve it first")
    device = x.device
    kind = _TORCH_DEVICE_KINDS.get(device.type)
    if kind is None:
        raise InvalidArgumentError(f"{what} is on {device}; opsched runs on the CPU and CUDA devices")
    if kind == _lib.CUDA and torch.version.hip:
        kind = _lib.HIP
    index = device.index if device.index is not None else 0
    if any(s < 0 for s in x.stride()):
        raise InvalidArgumentError(f"{what} has a negative stride")
    return View(x, what, x.data_ptr() or None, names[x.dtype], x.shape, x.stride(), (kind, index),
                readonly=False, kind="torch")


_TORCH_DEVICE_KINDS = {"cpu": _lib.CPU, "cuda": _lib.CUDA}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM = 1, 2, 3, 10
_DL_DTYPES = {(0, 32): _lib.I32, (0, 64): _lib.I64, (2, 32): _lib.F32, (2, 16): _lib.F16, (4, 16): _lib.BF16}


def _from_dlpack(x, what):
    # The capsule is read, not consumed: its destructor frees the producer's structure
    # once the View (which keeps the capsule) is gone, after the call.
    capsule = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = get(capsule, b"dltensor")
    t = _DLTensor.from_address(pointer)
    code = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or code not in _DL_DTYPES:
        raise InvalidArgumentError(f"{what} has DLPack dtype code {t.dtype.code} bits {t.dtype.bits} "
                                   f"lanes {t.dtype.lanes}; opsched takes float32, float16, bfloat16, int32 or int64")
    dev = {_DL_CPU: _lib.CPU, _DL_CUDA_HOST: _lib.CPU, _DL_CUDA: _lib.CUDA, _DL_ROCM: _lib.HIP}.get(
        t.device.device_type)
    if dev is None:
        raise InvalidArgumentError(f"{what} is on DLPack device type {t.device.device_type}; opsched runs "
                                   "on the CPU, CUDA and ROCm")
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else _contiguous_strides(shape)
    if any(s < 0 for s in strides):
        raise InvalidArgumentError(f"{what} has a negative stride")
    data = (t.data or 0) + t.byte_offset
    index = 0 if dev == _lib.CPU else t.device.device_id
    return View(x, what, data or None, _DL_DTYPES[code], shape, strides, (dev, index), keepalive=capsule)


def view(x, what):
    """The View of array `x`; `what` names it in errors ("scatter: index")."""
    if _is_torch(x) and hasattr(x, "data_ptr"):
        return _from_torch(x, what)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        device = _cuda_device_of_pointer(cai["data"][0])
        return _from_interface(x, cai, device, what, "cupy" if _is_cupy(x) else "other")
    ai = getattr(x, "__array_interface__", None)
    if ai is not None:
        return _from_interface(x, ai, (_lib.CPU, 0), what, "numpy" if _is_numpy(x) else "other")
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, what)
    raise InvalidArgumentError(f"{what} is a {type(x).__name__}, not an array: opsched takes objects with "
                               "__cuda_array_interface__, __array_interface__ or __dlpack__ (PyTorch, CuPy, NumPy)")


def _is_numpy(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def _cuda_device_of_pointer(pointer):
    """The CUDA device of a __cuda_array_interface__ pointer, asked of CuPy when loaded."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and pointer:
        try:
            return (_lib.CUDA, cupy.cuda.runtime.pointerGetAttributes(pointer).device)
        except Exception:  # pragma: no cover - a pointer CuPy cannot place
            pass
    return (_lib.CUDA, 0)


def empty_like(view_, shape, dtype):
    """A new array of `shape` and `dtype` (a C dtype) on the device of `view_`, made by the
    library `view_` comes from."""
    name = _lib.DTYPE_NAMES[dtype]
    if view_.kind == "numpy" or (view_.kind == "other" and view_.device[0] == _lib.CPU):
        import numpy as np
        if dtype == _lib.BF16:
            return np.empty(shape, dtype=view_.array.dtype)
        return np.empty(shape, dtype=name)
    if view_.kind == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, name), device=view_.array.device)
    if view_.kind == "cupy":
        import cupy
        if dtype == _lib.BF16:
            raise Error("CuPy has no bfloat16; pass out=")
        with cupy.cuda.Device(view_.device[1]):
            return cupy.empty(shape, dtype=name)
    raise Error(f"{view_.what} is a {type(view_.array).__name__} on {device_name(view_.device)}: opsched can "
                "allocate outputs with NumPy, PyTorch or CuPy only; pass out=")


def _library_stream(kind, device):
    """The current stream of CUDA `device` in torch or CuPy (`kind`), None for others."""
    if kind == "torch":
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # the pointer, no Stream object
        if raw is not None:
            return raw(device[1]) or None
        return torch.cuda.current_stream(device[1]).cuda_stream or None
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(device[1]):
            return cupy.cuda.get_current_stream().ptr or None
    return None


def current_stream(view_):
    """The stream work on `view_` goes on: torch's or CuPy's current stream, else the
    default stream (None)."""
    if view_.device[0] == _lib.CPU:
        return None
    return _library_stream(view_.kind, view_.device)


_NO_GUARD = contextlib.nullcontext()


def device_guard(view_):
    """A context that restores the caller's current device after the call: the library
    makes the tensor's device current, and torch and CuPy keep their own notion of it."""
    if view_.device[0] != _lib.CPU and view_.kind == "torch":
        import torch
        if torch.cuda.current_device() == view_.device[1]:
            return _NO_GUARD  # already current: nothing to restore
        return torch.cuda.device(view_.device[1])
    if view_.device[0] != _lib.CPU and view_.kind == "cupy":
        import cupy
        return cupy.cuda.Device(view_.device[1])
    return contextlib.nullcontext()


def framework_stream(device):
    """The current stream of `device` in torch or CuPy, when loaded (else None: the
    default stream)."""
    if device is None or device[0] == _lib.CPU:
        return None
    if "torch" in sys.modules:
        import torch
        if torch.cuda.is_available():
            return _library_stream("torch", device)
    if "cupy" in sys.modules:
        return _library_stream("cupy", device)
    return None
