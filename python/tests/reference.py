"""float64 references of the ops, in plain NumPy, for the Python tests."""

import numpy as np


def scatter(input, dim, index, src, reduce=None):
    """torch.scatter / scatter_reduce(include_self=True) in float64; also the number of
    updates that hit each element (for tolerances)."""
    out = np.array(input, dtype=np.float64)
    hits = np.zeros(out.shape, dtype=np.int64)
    src = np.asarray(src, dtype=np.float64)
    dim = dim % out.ndim
    for p in np.ndindex(*index.shape):
        target = list(p)
        target[dim] = int(index[p]) % out.shape[dim]
        target = tuple(target)
        v = src[p]
        if reduce is None:
            out[target] = v
        elif reduce in ("sum", "mean"):
            out[target] += v
        elif reduce == "prod":
            out[target] *= v
        elif reduce == "amax":
            out[target] = max(out[target], v)
        elif reduce == "amin":
            out[target] = min(out[target], v)
        hits[target] += 1
    if reduce == "mean":
        out /= hits + 1  # include_self: the input counts once
    return out, hits


def _pad(x, pad):
    return np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))


def _out_size(h, r, stride, pad, dil):
    return (h + 2 * pad - dil * (r - 1) - 1) // stride + 1


def conv2d(x, w, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1):
    """NCHW convolution in float64."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    p, q = _out_size(h, r, stride[0], pad[0], dil[0]), _out_size(wd, s, stride[1], pad[1], dil[1])
    xp = _pad(x, pad)
    y = np.zeros((n, k, p, q))
    kg = k // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(s):
                patch = xs[:, :, i * dil[0]: i * dil[0] + stride[0] * (p - 1) + 1: stride[0],
                           j * dil[1]: j * dil[1] + stride[1] * (q - 1) + 1: stride[1]]
                y[:, g * kg:(g + 1) * kg] += np.einsum("ncpq,kc->nkpq", patch, w[g * kg:(g + 1) * kg, :, i, j])
    return y


def conv2d_backward(dy, x, w, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1):
    """(dx, dw, db) of y = conv2d(x, w) in float64."""
    dy, x, w = (np.asarray(a, np.float64) for a in (dy, x, w))
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    p, q = dy.shape[2], dy.shape[3]
    xp = _pad(x, pad)
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    kg = k // groups
    for g in range(groups):
        cs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for i in range(r):
            for j in range(s):
                rows = slice(i * dil[0], i * dil[0] + stride[0] * (p - 1) + 1, stride[0])
                cols = slice(j * dil[1], j * dil[1] + stride[1] * (q - 1) + 1, stride[1])
                dw[ks, :, i, j] += np.einsum("nkpq,ncpq->kc", dy[:, ks], xp[:, cs, rows, cols])
                dxp[:, cs, rows, cols] += np.einsum("nkpq,kc->ncpq", dy[:, ks], w[ks, :, i, j])
    dx = dxp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd]
    return dx, dw, dy.sum(axis=(0, 2, 3))


ACTIVATIONS = {
    None: lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh,
}
