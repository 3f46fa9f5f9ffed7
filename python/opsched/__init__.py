"""opsched for Python: the autotuned ops of libopsched.so (opsched/c_api.h) on PyTorch,
CuPy and NumPy arrays, through ctypes. See docs/python.md.

    import opsched
    y = opsched.conv2d(x, w, b, stride=1, padding=1, activation="relu")
    out = opsched.scatter(data, 0, index, src, reduce="sum")
    print(opsched.explain("reduce x=f32[64,1024] axes=1 op=sum"))
"""

from opsched.errors import Error, IndexOutOfRangeError, InvalidArgumentError
from opsched.ops import (amax, amin, bias_grad, conv2d, conv2d_backward, mean, scatter, scatter_,
                         sum)
from opsched.runtime import Runtime, default_runtime, explain, reset_default_runtimes, synchronize

__all__ = [
    "Error", "IndexOutOfRangeError", "InvalidArgumentError", "Runtime", "amax", "amin", "bias_grad",
    "conv2d", "conv2d_backward", "default_runtime", "explain", "mean", "reset_default_runtimes", "scatter",
    "scatter_", "sum", "synchronize",
]
__version__ = "0.1.0"
