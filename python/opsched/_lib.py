"""Finding libopsched.so and declaring the C API (opsched/c_api.h) to ctypes."""

import ctypes
import os
import pathlib
import threading

C_API_VERSION = 2

LIBRARY_NAME = "libopsched.so"

# Element types, device kinds and the enums of opsched/c_api.h.
F32, F16, BF16, I32, I64 = range(5)
DTYPE_NAMES = {F32: "float32", F16: "float16", BF16: "bfloat16", I32: "int32", I64: "int64"}
CPU, CUDA, HIP = range(3)
DEVICE_NAMES = {CPU: "cpu", CUDA: "cuda", HIP: "hip"}

OK = 0
INVALID_ARGUMENT = 3
NOT_FOUND = 5
RESOURCE_EXHAUSTED = 8
OUT_OF_RANGE = 11


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("device_type", ctypes.c_int32),
        ("device_index", ctypes.c_int32),
    ]


class RuntimeOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("device_type", ctypes.c_int32),
        ("device_index", ctypes.c_int32),
        ("record_files", ctypes.POINTER(ctypes.c_char_p)),
        ("num_record_files", ctypes.c_int32),
        ("model_file", ctypes.c_char_p),
        ("deterministic", ctypes.c_int32),
        ("allow_transferred_records", ctypes.c_int32),
        ("synchronous_errors", ctypes.c_int32),
        ("record_untuned_file", ctypes.c_char_p),
    ]


class Conv2dParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("stride", ctypes.c_int64 * 2),
        ("pad", ctypes.c_int64 * 2),
        ("dilation", ctypes.c_int64 * 2),
        ("groups", ctypes.c_int64),
        ("layout", ctypes.c_int32),
        ("math", ctypes.c_int32),
    ]


_T = ctypes.POINTER(Tensor)
_RT = ctypes.c_void_p
_STATUS = ctypes.c_int32
_SIGNATURES = {
    "opsched_c_api_version": (ctypes.c_int32, []),
    "opsched_last_error": (ctypes.c_char_p, []),
    "opsched_set_log_level": (_STATUS, [ctypes.c_char_p]),
    "opsched_runtime_options_init": (None, [ctypes.POINTER(RuntimeOptions)]),
    "opsched_runtime_create": (_STATUS, [ctypes.POINTER(RuntimeOptions), ctypes.POINTER(_RT)]),
    "opsched_runtime_destroy": (None, [_RT]),
    "opsched_runtime_device": (_STATUS, [_RT, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)]),
    "opsched_runtime_target": (ctypes.c_char_p, [_RT]),
    "opsched_runtime_model_error": (ctypes.c_char_p, [_RT]),
    "opsched_scatter": (_STATUS, [_RT, _T, _T, _T, _T, ctypes.c_int64, ctypes.c_int32, ctypes.c_void_p]),
    "opsched_reduce": (_STATUS, [_RT, _T, _T, ctypes.POINTER(ctypes.c_int64), ctypes.c_int32,
                                 ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p]),
    "opsched_bias_grad": (_STATUS, [_RT, _T, _T, ctypes.c_int32, ctypes.c_void_p]),
    "opsched_conv2d_params_init": (None, [ctypes.POINTER(Conv2dParams)]),
    "opsched_conv2d": (_STATUS, [_RT, _T, _T, _T, ctypes.POINTER(Conv2dParams), ctypes.c_void_p]),
    "opsched_conv2d_bias_act": (_STATUS, [_RT, _T, _T, _T, _T, ctypes.POINTER(Conv2dParams),
                                          ctypes.c_int32, ctypes.c_void_p]),
    "opsched_conv2d_backward": (_STATUS, [_RT, _T, _T, _T, _T, _T, _T, ctypes.POINTER(Conv2dParams),
                                          ctypes.c_void_p]),
    "opsched_synchronize": (_STATUS, [_RT, ctypes.c_void_p]),
    "opsched_explain": (_STATUS, [_RT, ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_char))]),
    "opsched_free_string": (None, [ctypes.POINTER(ctypes.c_char)]),
}


def candidate_paths():
    """Where the library is looked for, in order: $OPSCHED_LIBRARY, a copy inside this
    package, then a Bazel build of the checkout this package lies in."""
    here = pathlib.Path(__file__).resolve().parent
    paths = []
    if os.environ.get("OPSCHED_LIBRARY"):
        paths.append(pathlib.Path(os.environ["OPSCHED_LIBRARY"]))
    paths.append(here / LIBRARY_NAME)
    for root in (here.parent, here.parent.parent):
        paths.append(root / LIBRARY_NAME)
        paths.append(root / "bazel-bin" / "opsched" / LIBRARY_NAME)
    return paths


_lock = threading.Lock()
_library = None


def library():
    """The loaded library with its functions declared (loaded once)."""
    global _library
    with _lock:
        if _library is None:
            _library = _load()
        return _library


def _load():
    from opsched.errors import Error

    tried = []
    for path in candidate_paths():
        if not path.is_file():
            tried.append(f"{path} (absent)")
            continue
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        missing = [name for name in _SIGNATURES if not hasattr(lib, name)]
        if missing:
            tried.append(f"{path} (lacks {', '.join(missing)})")
            continue
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        version = lib.opsched_c_api_version()
        if version < C_API_VERSION:
            tried.append(f"{path} (C API version {version}, this package needs {C_API_VERSION})")
            continue
        return lib
    raise Error(
        "cannot load libopsched.so; build it (bazel build //opsched:libopsched.so) and set "
        "OPSCHED_LIBRARY to its path, or install the package with the library copied in "
        "(python/copy_library.py). Tried: " + "; ".join(tried))
