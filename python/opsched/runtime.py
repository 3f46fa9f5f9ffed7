"""Runtimes: one per device, made on first use from the environment, or made by hand."""

import ctypes
import os
import sys
import threading

from opsched import _lib
from opsched._tensor import device_name, framework_stream
from opsched.errors import Error, InvalidArgumentError, check


def parse_device(device):
    """(device type, index) of "cpu", "cuda", "cuda:N", "hip:N", a torch.device, or None
    (the default target: the first GPU, else the CPU)."""
    if device is None:
        return None
    if isinstance(device, tuple):
        return device
    text = str(device)
    kind, _, index = text.partition(":")
    kinds = {"cpu": _lib.CPU, "cuda": _lib.CUDA, "hip": _lib.HIP}
    if kind not in kinds or (index and not index.isdigit()):
        raise InvalidArgumentError(f"unknown device '{text}' (cpu, cuda, cuda:N, hip:N)")
    return (kinds[kind], 0 if kind == "cpu" else int(index or 0))


class Runtime:
    """An opsched Runtime on one device, with its record logs and selector model.

    records: paths of record logs (opsched tune writes them); model: a selector model
    (opsched records train); record_untuned: a file that collects every workload served
    without an exact record, once each, for `opsched tune --suite FILE`; synchronous_errors: data errors (an out-of-range index) are
    raised by the call itself instead of by synchronize(). The CPU runs inline, so the
    default runtimes of the CPU raise at once; GPU ones defer to synchronize()."""

    def __init__(self, device=None, records=(), model=None, deterministic=False,
                 allow_transferred_records=False, synchronous_errors=False, record_untuned=None):
        lib = _lib.library()
        options = _lib.RuntimeOptions()
        lib.opsched_runtime_options_init(ctypes.byref(options))
        parsed = parse_device(device)
        if parsed is not None:
            options.device_type, options.device_index = parsed
        self.records = [os.fspath(r) for r in records]
        encoded = [r.encode() for r in self.records]
        files = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
        options.record_files = files
        options.num_record_files = len(encoded)
        options.model_file = os.fspath(model).encode() if model else None
        options.deterministic = int(bool(deterministic))
        options.allow_transferred_records = int(bool(allow_transferred_records))
        options.synchronous_errors = int(bool(synchronous_errors))
        self.record_untuned = os.fspath(record_untuned) if record_untuned else None
        options.record_untuned_file = self.record_untuned.encode() if self.record_untuned else None
        handle = ctypes.c_void_p()
        check(lib.opsched_runtime_create(ctypes.byref(options), ctypes.byref(handle)))
        self._lib = lib
        self._handle = handle
        kind, index = ctypes.c_int32(), ctypes.c_int32()
        check(lib.opsched_runtime_device(handle, ctypes.byref(kind), ctypes.byref(index)))
        self.device = (kind.value, index.value)
        self.target = lib.opsched_runtime_target(handle).decode()
        self.model_error = lib.opsched_runtime_model_error(handle).decode()

    @property
    def handle(self):
        if self._handle is None:
            raise Error("the runtime is closed")
        return self._handle

    def close(self):
        if getattr(self, "_handle", None) is not None:
            self._lib.opsched_runtime_destroy(self._handle)
            self._handle = None

    def __del__(self):
        # At interpreter exit the GPU runtime may already be torn down (torch's atexit):
        # the process is ending anyway, so the runtime is left to it.
        if not sys.is_finalizing():
            self.close()

    def __repr__(self):
        return f"opsched.Runtime({device_name(self.device)}, records={self.records})"

    def explain(self, line):
        """The decision for a workload line, its provenance and every candidate considered."""
        text = ctypes.POINTER(ctypes.c_char)()
        check(self._lib.opsched_explain(self.handle, line.encode(), ctypes.byref(text)))
        try:
            return ctypes.string_at(text).decode()
        finally:
            self._lib.opsched_free_string(text)

    def synchronize(self, stream=None):
        """Waits for `stream` (None: the default stream) and raises the first data error
        found on the device by calls made before."""
        check(self._lib.opsched_synchronize(self.handle, stream))


_lock = threading.Lock()
_defaults = {}


def environment_options():
    """The default runtimes' options from OPSCHED_RECORDS (os.pathsep-separated logs),
    OPSCHED_MODEL and OPSCHED_RECORD_UNTUNED; OPSCHED_LOG_LEVEL is applied too
    (docs/python.md, "Environment variables")."""
    level = os.environ.get("OPSCHED_LOG_LEVEL")
    if level:
        check(_lib.library().opsched_set_log_level(level.encode()))
    records = [p for p in os.environ.get("OPSCHED_RECORDS", "").split(os.pathsep) if p]
    return {"records": records, "model": os.environ.get("OPSCHED_MODEL") or None,
            "record_untuned": os.environ.get("OPSCHED_RECORD_UNTUNED") or None}


def _make_default(key):
    return Runtime(key, synchronous_errors=(key is not None and key[0] == _lib.CPU), **environment_options())


def default_runtime(device=None):
    """The runtime of `device` made from the environment on first use (None: the default
    target, the first GPU, else the CPU). CPU runtimes raise data errors at once."""
    key = parse_device(device)
    with _lock:
        if key in _defaults:
            return _defaults[key]
        rt = _make_default(key)
        if key is None:
            # The default target, known now: share the runtime of that device.
            if rt.device in _defaults:
                rt.close()
                rt = _defaults[rt.device]
            elif rt.device[0] == _lib.CPU:
                rt.close()
                rt = _make_default(rt.device)
            _defaults[rt.device] = rt
        if rt.model_error:
            import warnings
            warnings.warn(f"opsched: {rt.model_error}; deciding without the model")
        _defaults[key] = rt
        return rt


def reset_default_runtimes():
    """Forgets the default runtimes, so the next call reads the environment again."""
    with _lock:
        for rt in set(_defaults.values()):
            rt.close()
        _defaults.clear()


def explain(line, device=None):
    """opsched.explain: why a workload line gets its implementation on `device`."""
    return default_runtime(device).explain(line)


def synchronize(device=None, stream=None):
    """Waits for `stream` on `device` (None: torch's or CuPy's current stream there, else
    the default stream) and raises the first deferred data error. Give the stream the
    calls ran on: checks queued on another stream are read once their work is known to
    be done."""
    rt = default_runtime(device)
    if stream is None:
        stream = framework_stream(rt.device)
    elif not isinstance(stream, int):
        stream = getattr(stream, "cuda_stream", None) or getattr(stream, "ptr", None)
    return rt.synchronize(stream)
