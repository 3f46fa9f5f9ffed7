"""opsched's ops as torch.autograd Functions and nn.Modules, for models trained in PyTorch.

    import opsched.torch as ot
    conv = ot.Conv2d(3, 32, 3, padding=1, activation="relu")   # an nn.Conv2d
    y = conv(x)                                                  # conv+bias+relu, one op
    y.sum().backward()   # dx, dw and the bias gradient from opsched's conv2d backward
    agg = ot.scatter_add(torch.zeros(n, f, device="cuda"), 0, index, messages)

Forward and backward run on torch's current stream with no host sync, like every opsched
op. The backward of conv2d computes dx and dw in one opsched op and the bias gradient
with opsched's bias-gradient reduction (the fast path of issue "reduce"); an
activation's derivative is applied by torch first. Incoming gradients are made
contiguous (autograd may hand an expanded one). Tensors must otherwise be as the plain
ops take them: contiguous NCHW input or channels-last, float32/float16/bfloat16, on the
device of the runtime.
"""

import torch

from opsched import ops

__all__ = ["Conv2d", "conv2d", "scatter_add"]


def _activation_grad(activation, grad, y):
    """The gradient before the activation, from y = act(z)."""
    if activation in (None, "identity"):
        return grad
    if activation == "relu":
        return grad * (y > 0).to(grad.dtype)
    if activation == "sigmoid":
        return grad * y * (1 - y)
    if activation == "tanh":
        return grad * (1 - y * y)
    raise ValueError(f"conv2d: activation {activation!r} has no derivative here")


class _Conv2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups, activation, math):
        y = ops.conv2d(input, weight, bias, stride, padding, dilation, groups, activation, math=math)
        ctx.conv = dict(stride=stride, padding=padding, dilation=dilation, groups=groups, math=math)
        ctx.activation = activation
        ctx.has_bias = bias is not None
        ctx.save_for_backward(input, weight, y if activation not in (None, "identity") else None)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, y = ctx.saved_tensors
        grad = _activation_grad(ctx.activation, grad_output, y).contiguous()
        dx, dw, db = ops.conv2d_backward(grad, input, weight, bias=ctx.has_bias, **ctx.conv)
        return dx, dw, db, None, None, None, None, None, None


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None, math="fp32"):
    """torch.nn.functional.conv2d followed by `activation` (None, "relu", "sigmoid",
    "tanh"), fused with the bias, differentiable in input, weight and bias."""
    return _Conv2d.apply(input, weight, bias, stride, padding, dilation, groups, activation, math)


class _ScatterAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dim, index, src):
        out = ops.scatter(input, dim, index, src, "sum")
        ctx.dim = dim
        ctx.src_shape = src.shape
        ctx.save_for_backward(index)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad_input = grad_output if ctx.needs_input_grad[0] else None
        grad_src = None
        if ctx.needs_input_grad[3]:
            gathered = grad_output.gather(ctx.dim, index)
            if gathered.shape == ctx.src_shape:
                grad_src = gathered
            else:  # src larger than index: the part it does not cover got no gradient
                grad_src = grad_output.new_zeros(ctx.src_shape)
                grad_src[tuple(slice(0, n) for n in index.shape)] = gathered
        return grad_input, None, None, grad_src


def scatter_add(input, dim, index, src):
    """torch.scatter_add (a new tensor), differentiable in input and src."""
    return _ScatterAdd.apply(input, dim, index, src)


class Conv2d(torch.nn.Conv2d):
    """torch.nn.Conv2d run by opsched, with an optional fused activation ("relu",
    "sigmoid", "tanh") and math "fp32" (no TF32) or "tf32". Zero padding only."""

    def __init__(self, *args, activation=None, math="fp32", **kwargs):
        super().__init__(*args, **kwargs)
        if self.padding_mode != "zeros":
            raise ValueError(f"opsched.torch.Conv2d: padding_mode {self.padding_mode!r} (only 'zeros')")
        self.activation = activation
        self.math = math

    def forward(self, input):
        return conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups,
                      self.activation, self.math)

    def extra_repr(self):
        return super().extra_repr() + f", activation={self.activation!r}, math={self.math!r}"
