#!/usr/bin/env python3
"""What one opsched call from Python costs on the host, next to PyTorch's own call.

    python3 bench/python_call_cost.py [--records LOG] [--json OUT]

For a tiny sum (the kernel takes a few microseconds, so the host decides), the two
convolutions of docs/examples/torch_model (forward with bias+relu, backward with the bias
gradient) and the example's scatter-add, it times back-to-back calls on the current
stream: host microseconds per call (the loop, before the final synchronisation) and
microseconds per call including it. The tiny sum is also called through the bare C
function with its opsched_tensor structs made once, to split the Python package's own
cost from the library's. Needs torch and a CUDA GPU.
"""
import argparse
import ctypes
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import opsched
from opsched._tensor import view


def per_call(fn, calls, rounds=5):
    """(host µs per call, µs per call with the final synchronisation), medians of rounds."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    host, total = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        host.append((t1 - t0) / calls * 1e6)
        total.append((t2 - t0) / calls * 1e6)
    return statistics.median(host), statistics.median(total)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", action="append", default=[], help="record logs for the runtime")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("python_call_cost.py: needs a CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cudnn.allow_tf32 = False
    rt = opsched.Runtime("cuda:0", records=args.records)
    r = lambda *s: torch.randn(*s, device="cuda")
    tiny, tiny_out = r(32), r(())
    x1, w1, b1, y1 = r(64, 3, 32, 32), r(32, 3, 3, 3), r(32), r(64, 32, 32, 32)
    x2, w2, b2, y2 = r(64, 32, 32, 32), r(64, 32, 3, 3), r(64), r(64, 64, 16, 16)
    data = r(20000, 64)
    index = torch.randint(0, 20000, (200000, 1), device="cuda").expand(200000, 64).contiguous()
    src = r(200000, 64)
    vt, vo = view(tiny, "x"), view(tiny_out, "y")
    axes = (ctypes.c_int64 * 1)(0)
    lib, handle = rt._lib, rt.handle
    cases = [
        ("sum of 32 floats: opsched.sum", lambda: opsched.sum(tiny, 0, out=tiny_out, runtime=rt)),
        ("sum of 32 floats: bare C call", lambda: lib.opsched_reduce(handle, ctypes.byref(vt.c), ctypes.byref(vo.c),
                                                                      axes, 1, 0, 0, None)),
        ("sum of 32 floats: torch.sum", lambda: torch.sum(tiny, 0, out=tiny_out)),
        ("conv 3->32 fwd+bias+relu: opsched", lambda: opsched.conv2d(x1, w1, b1, padding=1, activation="relu",
                                                                     out=y1, runtime=rt)),
        ("conv 3->32 fwd+bias+relu: torch", lambda: F.relu(F.conv2d(x1, w1, b1, padding=1))),
        ("conv 32->64 s2 fwd+bias+relu: opsched", lambda: opsched.conv2d(x2, w2, b2, stride=2, padding=1,
                                                                         activation="relu", out=y2, runtime=rt)),
        ("conv 32->64 s2 fwd+bias+relu: torch", lambda: F.relu(F.conv2d(x2, w2, b2, stride=2, padding=1))),
        ("conv 32->64 s2 backward+bias: opsched", lambda: opsched.conv2d_backward(y2, x2, w2, stride=2, padding=1,
                                                                                  bias=True, runtime=rt)),
        ("conv 32->64 s2 backward+bias: torch", lambda: torch.ops.aten.convolution_backward(
            y2, x2, w2, [64], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])),
        ("scatter-add 200000x64 into 20000: opsched", lambda: opsched.scatter(data, 0, index, src, "sum", runtime=rt)),
        ("scatter-add 200000x64 into 20000: torch", lambda: data.scatter_add(0, index, src)),
    ]
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "target": rt.target,
               "records": args.records, "us_per_call": {}}
    print(f"{rt.target}\n{'call':46} {'host us/call':>13} {'with sync':>10}")
    for name, fn in cases:
        host, total = per_call(fn, args.calls)
        results["us_per_call"][name] = {"host": host, "with_sync": total}
        print(f"{name:46} {host:13.1f} {total:10.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
