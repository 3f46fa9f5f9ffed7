"""The ops, with PyTorch's semantics, on any array opsched can see (opsched._tensor)."""

import ctypes

from opsched import _lib
from opsched._tensor import View, current_stream, device_guard, device_name, empty_like, view
from opsched.errors import InvalidArgumentError, check
from opsched.runtime import default_runtime

_SCATTER_REDUCTIONS = {None: 0, "none": 0, "sum": 1, "add": 1, "prod": 2, "multiply": 2, "amin": 3, "amax": 4}
_REDUCE = {"sum": 0, "mean": 1, "amax": 2, "amin": 3}
_ACTIVATIONS = {None: 0, "identity": 0, "relu": 1, "sigmoid": 2, "tanh": 3}
_LAYOUTS = {"nchw": 0, "nhwc": 1}
_MATH = {"fp32": 0, "tf32": 1}
_DTYPES = {"float32": _lib.F32, "float16": _lib.F16, "bfloat16": _lib.BF16, "int32": _lib.I32, "int64": _lib.I64}


def _choice(table, value, what):
    if value not in table:
        names = ", ".join(repr(k) for k in table)
        raise InvalidArgumentError(f"{what} {value!r} is not supported ({names})")
    return table[value]


def _same_device(op, views):
    first = views[0]
    for v in views[1:]:
        if v.device != first.device:
            raise InvalidArgumentError(f"{op}: {v.what} is on {device_name(v.device)} but {first.what} is on "
                                       f"{device_name(first.device)}; opsched does not copy between devices")


def _runtime(runtime, views):
    rt = runtime if runtime is not None else default_runtime(views[0].device)
    if rt.device != views[0].device:
        raise InvalidArgumentError(f"{views[0].what} is on {device_name(views[0].device)} but the runtime runs on "
                                   f"{device_name(rt.device)}")
    return rt


def _stream(stream, like):
    if stream is None:
        return current_stream(like)
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attribute):
            return getattr(stream, attribute) or None
    return int(stream) or None


def _output(op, out, like, shape, dtype, what):
    """The View of the output `what`: `out` when given (checked), else a new array."""
    shape = tuple(int(d) for d in shape)
    if out is None:
        return view(empty_like(like, shape, dtype), f"{op}: {what}")
    v = view(out, f"{op}: {what}")
    if v.readonly:
        raise InvalidArgumentError(f"{op}: {what} is read-only")
    if v.shape != shape or v.dtype != dtype:
        raise InvalidArgumentError(f"{op}: {what} is {v.describe()} but must be "
                                   f"{_lib.DTYPE_NAMES[dtype]}{list(shape)}")
    return v


def _leading(v, shape):
    """The leading `shape` block of `v`, a view of the same memory (torch.scatter reads
    only the part of src that index covers)."""
    if len(shape) != len(v.shape) or tuple(shape) == v.shape or any(s > d for s, d in zip(shape, v.shape)):
        return v
    return View(v.array, v.what, v.data, v.dtype, shape, v.strides, v.device, v.readonly, v.kind)


def _call(fn, rt, like, *args):
    with device_guard(like):
        check(fn(rt.handle, *args))


def scatter(input, dim, index, src, reduce=None, *, out=None, runtime=None, stream=None):
    """torch.scatter / scatter_reduce(include_self=True): a new array equal to `input`, with
    out[...index[p]...] = src[p] along `dim` (reduce None), or combined with "sum", "prod",
    "mean", "amax" or "amin" ("add" and "multiply" as torch.scatter's reduce). "mean"
    divides each element by 1 + the number of updates it received (include_self=True): two
    scatter-adds (the sum, and the counts in float32) and one division in the array's own
    framework. `out` may be `input` itself (in place; scatter_ does that). An out-of-range
    index raises IndexOutOfRangeError and writes nothing (on a GPU: at synchronize())."""
    if reduce == "mean":
        return _scatter_mean(input, dim, index, src, out, runtime, stream)
    r = _choice(_SCATTER_REDUCTIONS, reduce, "scatter: reduce")
    x, i, s = view(input, "scatter: input"), view(index, "scatter: index"), view(src, "scatter: src")
    _same_device("scatter", [x, i, s])
    s = _leading(s, i.shape)
    result = out
    if out is None:
        if not x.is_contiguous():
            raise InvalidArgumentError(
                f"scatter: input {x.describe()} is not contiguous and opsched writes the output with the "
                "input's strides; pass a contiguous input, an out= of the same strides, or use scatter_ "
                "(in place)")
        result = empty_like(x, x.shape, x.dtype)
        o = view(result, "scatter: out")
    elif out is input:
        o = x
        if x.readonly:
            raise InvalidArgumentError("scatter: input is read-only and cannot be written in place")
    else:
        o = _output("scatter", out, x, x.shape, x.dtype, "out")
    _same_device("scatter", [x, o])
    rt = _runtime(runtime, [x])
    _call(rt._lib.opsched_scatter, rt, x, ctypes.byref(x.c), ctypes.byref(i.c), ctypes.byref(s.c), ctypes.byref(o.c),
          int(dim), r, _stream(stream, x))
    return result


def _scatter_mean(input, dim, index, src, out, runtime, stream):
    """scatter_reduce(..., "mean", include_self=True) from two scatter-adds. The counts are
    made first: an out-of-range index raises there, before anything of `input` or `out`
    is written (CPU), or is reported at synchronize() by both scatters (GPU)."""
    x = view(input, "scatter: input")
    i = view(index, "scatter: index")
    if x.dtype in (_lib.I32, _lib.I64):
        raise InvalidArgumentError(f"scatter: reduce 'mean' takes float32, float16 or bfloat16 data, "
                                   f"not {_lib.DTYPE_NAMES[x.dtype]}")
    counts = empty_like(x, x.shape, _lib.F32)
    counts[...] = 1
    ones = empty_like(x, i.shape, _lib.F32)
    ones[...] = 1
    scatter(counts, dim, index, ones, "sum", out=counts, runtime=runtime, stream=stream)
    result = scatter(input, dim, index, src, "sum", out=out, runtime=runtime, stream=stream)
    result /= counts
    return result


def scatter_(input, dim, index, src, reduce=None, *, runtime=None, stream=None):
    """In-place scatter (torch.Tensor.scatter_ / scatter_reduce_): writes `input`, returns it."""
    return scatter(input, dim, index, src, reduce, out=input, runtime=runtime, stream=stream)


def _reduce(op, x, dim, keepdim, dtype, out, runtime, stream):
    v = view(x, f"{op}: x")
    rank = len(v.shape)
    if dim is None:
        axes = list(range(rank))
    elif isinstance(dim, int):
        axes = [dim]
    else:
        axes = [int(d) for d in dim] or list(range(rank))
    normalised = []
    for a in axes:
        if a < -max(rank, 1) or a >= max(rank, 1):
            raise InvalidArgumentError(f"{op}: dim {a} is out of range for rank {rank}")
        normalised.append(a % rank if rank else 0)
    shape = [d if k not in normalised else 1 for k, d in enumerate(v.shape) if keepdim or k not in normalised]
    if dtype is not None:
        out_dtype = _choice(_DTYPES, str(dtype).replace("torch.", ""), f"{op}: dtype")
    elif op == "sum" and v.dtype == _lib.I32:
        out_dtype = _lib.I64  # torch.sum of int32 is int64
    else:
        out_dtype = v.dtype
    y = _output(op, out, v, shape, out_dtype, "out")
    _same_device(op, [v, y])
    rt = _runtime(runtime, [v])
    c_axes = (ctypes.c_int64 * max(len(axes), 1))(*axes)
    _call(rt._lib.opsched_reduce, rt, v, ctypes.byref(v.c), ctypes.byref(y.c), c_axes, len(axes), _REDUCE[op],
          int(bool(keepdim)), _stream(stream, v))
    return y.array


def sum(x, dim=None, keepdim=False, *, dtype=None, out=None, runtime=None, stream=None):  # noqa: A001
    """torch.sum: the sum over `dim` (an int, a sequence, or None for every axis),
    accumulated in float32; `dtype` may be float32 for a float16/bfloat16 `x`."""
    return _reduce("sum", x, dim, keepdim, dtype, out, runtime, stream)


def mean(x, dim=None, keepdim=False, *, dtype=None, out=None, runtime=None, stream=None):
    """torch.mean over `dim`."""
    return _reduce("mean", x, dim, keepdim, dtype, out, runtime, stream)


def amax(x, dim=None, keepdim=False, *, out=None, runtime=None, stream=None):
    """torch.amax over `dim` (NaN propagates); an empty reduction raises."""
    return _reduce("amax", x, dim, keepdim, None, out, runtime, stream)


def amin(x, dim=None, keepdim=False, *, out=None, runtime=None, stream=None):
    """torch.amin over `dim` (NaN propagates); an empty reduction raises."""
    return _reduce("amin", x, dim, keepdim, None, out, runtime, stream)


def bias_grad(grad_output, layout="nchw", *, out=None, runtime=None, stream=None):
    """The bias gradient of a convolution: grad_output summed over every axis but the
    channel axis (1 for "nchw", the last for "nhwc")."""
    dy = view(grad_output, "bias_grad: grad_output")
    l = _choice(_LAYOUTS, layout, "bias_grad: layout")
    if len(dy.shape) < 2:
        raise InvalidArgumentError(f"bias_grad: grad_output {dy.describe()} needs a batch and a channel axis")
    channels = dy.shape[1] if l == 0 else dy.shape[-1]
    db = _output("bias_grad", out, dy, [channels], dy.dtype, "out")
    _same_device("bias_grad", [dy, db])
    rt = _runtime(runtime, [dy])
    _call(rt._lib.opsched_bias_grad, rt, dy, ctypes.byref(dy.c), ctypes.byref(db.c), l, _stream(stream, dy))
    return db.array


def _pair(value, what):
    if isinstance(value, int):
        return (value, value)
    pair = tuple(int(v) for v in value)
    if len(pair) != 2:
        raise InvalidArgumentError(f"{what} must be an int or a pair, got {value!r}")
    return pair


def _conv_params(op, x, w, stride, padding, dilation, groups, math):
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise InvalidArgumentError(f"{op}: input {x.describe()} and weight {w.describe()} must have rank 4 (NCHW, KCRS)")
    p = _lib.Conv2dParams()
    _lib.library().opsched_conv2d_params_init(ctypes.byref(p))
    st, dil = _pair(stride, f"{op}: stride"), _pair(dilation, f"{op}: dilation")
    r, s = w.shape[2], w.shape[3]
    if padding == "valid":
        pad = (0, 0)
    elif padding == "same":
        if st != (1, 1):
            raise InvalidArgumentError(f"{op}: padding='same' needs stride 1")
        total = (dil[0] * (r - 1), dil[1] * (s - 1))
        if total[0] % 2 or total[1] % 2:
            raise InvalidArgumentError(f"{op}: padding='same' would pad unevenly for this filter; give padding")
        pad = (total[0] // 2, total[1] // 2)
    else:
        pad = _pair(padding, f"{op}: padding")
    p.stride[:] = st
    p.pad[:] = pad
    p.dilation[:] = dil
    p.groups = int(groups)
    p.math = _choice(_MATH, math, f"{op}: math")
    if min(st) < 1 or min(dil) < 1:
        raise InvalidArgumentError(f"{op}: stride {st} and dilation {dil} must be positive")
    # A filter that does not fit is the library's to report; the output shape stays >= 0.
    sizes = [(x.shape[2 + k] + 2 * pad[k] - dil[k] * (w.shape[2 + k] - 1) - 1) // st[k] + 1 for k in range(2)]
    return p, (x.shape[0], w.shape[0], max(sizes[0], 0), max(sizes[1], 0))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None, *,
           math="fp32", out=None, runtime=None, stream=None):
    """torch.nn.functional.conv2d (NCHW), then `activation` (None, "relu", "sigmoid",
    "tanh") fused with the bias. math "fp32" uses no TF32; "tf32" allows it. An activation
    without a bias uses a zero bias."""
    op = "conv2d"
    x, w = view(input, f"{op}: input"), view(weight, f"{op}: weight")
    _same_device(op, [x, w])
    params, shape = _conv_params(op, x, w, stride, padding, dilation, groups, math)
    act = _choice(_ACTIVATIONS, activation, f"{op}: activation")
    y = _output(op, out, x, shape, x.dtype, "out")
    rt = _runtime(runtime, [x])
    st = _stream(stream, x)
    if bias is None and act == 0:
        _call(rt._lib.opsched_conv2d, rt, x, ctypes.byref(x.c), ctypes.byref(w.c), ctypes.byref(y.c),
              ctypes.byref(params), st)
        return y.array
    if bias is None:
        zero = empty_like(x, [w.shape[0]], x.dtype)
        zero[...] = 0
        b = view(zero, f"{op}: bias")
    else:
        b = view(bias, f"{op}: bias")
    _same_device(op, [x, b, y])
    _call(rt._lib.opsched_conv2d_bias_act, rt, x, ctypes.byref(x.c), ctypes.byref(w.c), ctypes.byref(b.c),
          ctypes.byref(y.c), ctypes.byref(params), act, st)
    return y.array


def conv2d_backward(grad_output, input, weight, stride=1, padding=0, dilation=1, groups=1, bias=False, *,
                    math="fp32", out=None, runtime=None, stream=None):
    """The gradients of y = conv2d(input, weight) given grad_output: (grad_input,
    grad_weight, grad_bias), grad_bias None unless `bias`. `out` may give the three (or
    two) arrays to write."""
    op = "conv2d_backward"
    dy = view(grad_output, f"{op}: grad_output")
    x, w = view(input, f"{op}: input"), view(weight, f"{op}: weight")
    _same_device(op, [dy, x, w])
    params, _ = _conv_params(op, x, w, stride, padding, dilation, groups, math)
    outs = tuple(out) if out is not None else (None, None, None)
    outs = outs + (None,) * (3 - len(outs))
    dx = _output(op, outs[0], x, x.shape, x.dtype, "grad_input")
    dw = _output(op, outs[1], w, w.shape, w.dtype, "grad_weight")
    db = _output(op, outs[2], dy, [w.shape[0]], dy.dtype, "grad_bias") if bias else None
    _same_device(op, [x, dx, dw] + ([db] if db else []))
    rt = _runtime(runtime, [x])
    _call(rt._lib.opsched_conv2d_backward, rt, x, ctypes.byref(x.c), ctypes.byref(w.c), ctypes.byref(dy.c),
          ctypes.byref(dx.c), ctypes.byref(dw.c), ctypes.byref(db.c) if db else None, ctypes.byref(params),
          _stream(stream, x))
    return dx.array, dw.array, (db.array if db else None)
