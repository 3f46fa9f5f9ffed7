#!/usr/bin/env python3
"""opsched against PyTorch, side by side, on the same GPU and suite.

    python3 bench/compare_torch.py --suite bench/suites/scatter.txt \
        --opsched report/report.json [--json out.json] [--markdown out.md]

For every workload of the suite this builds valid random inputs, runs the PyTorch
equivalent and times it three ways: device time per call with CUDA events and an L2
flush before each call (the one the opsched report was measured with, by default the
read flush: core/l2_flush.h; --l2-flush), device time per call replayed
from a CUDA graph (no Python or dispatch overhead), and host wall time per call in a
back-to-back loop. It reads opsched's figures from `opsched bench --report` JSON and
prints the speedup (PyTorch time / opsched time) per workload and its geometric mean
per op family.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import workloads

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i32": torch.int32, "i64": torch.int64}


def tensor(spec, gen, fill="normal"):
    dtype, shape, strides = spec
    if strides is None:
        storage_shape = shape
    else:
        extent = 1 + sum((d - 1) * s for d, s in zip(shape, strides)) if all(shape) else 0
        storage_shape = [extent]
    t = torch.empty(storage_shape, dtype=DTYPES[dtype], device="cuda")
    if fill == "normal" and dtype in ("i32", "i64"):
        t.random_(-50, 51, generator=gen)
    elif fill == "normal":
        t.normal_(generator=gen)
    if strides is not None:
        t = t.as_strided(shape, strides)
    return t


def build_scatter(tensors, attrs, gen):
    data = tensor(tensors["data"], gen)
    upd = tensor(tensors["updates"], gen)
    axis = attrs.get("axis", 0) % len(tensors["data"][1])
    size = tensors["data"][1][axis]
    idx_shape = tensors["indices"][1]
    # PyTorch's scatter takes int64 indices only.
    idx = torch.randint(0, max(size, 1), idx_shape, device="cuda", generator=gen, dtype=torch.int64)
    reduction = attrs.get("reduction", "none")
    if reduction == "none":
        return lambda: torch.scatter(data, axis, idx, upd)
    if reduction == "add":
        return lambda: torch.scatter_add(data, axis, idx, upd)
    name = {"mul": "prod", "min": "amin", "max": "amax"}[reduction]
    return lambda: torch.scatter_reduce(data, axis, idx, upd, reduce=name, include_self=True)


def build_reduce(tensors, attrs, gen):
    x = tensor(tensors["x"], gen)
    axes = attrs.get("axes", list(range(x.dim())))
    axes = [axes] if isinstance(axes, int) else axes
    keep = attrs.get("keepdims", False)
    op = attrs.get("op", "sum")
    if op == "sum" and "dtype" in attrs:
        out = DTYPES[attrs["dtype"]]
        return lambda: torch.sum(x, dim=axes, keepdim=keep, dtype=out)
    if op == "sum":
        return lambda: torch.sum(x, dim=axes, keepdim=keep)
    if op == "mean":
        return lambda: torch.mean(x, dim=axes, keepdim=keep)
    if op == "max":
        return lambda: torch.amax(x, dim=axes, keepdim=keep)
    if op == "min":
        return lambda: torch.amin(x, dim=axes, keepdim=keep)
    if op == "sumsq":
        return lambda: torch.sum(x * x, dim=axes, keepdim=keep)
    raise ValueError(f"reduce op {op}")


def conv_args(tensors, attrs):
    return dict(stride=tuple(attrs.get("stride", [1, 1])), padding=tuple(attrs.get("pad", [0, 0])),
                dilation=tuple(attrs.get("dilation", [1, 1])), groups=attrs.get("groups", 1))


def conv_input(spec, layout, gen):
    t = tensor(spec, gen)
    if layout == "nhwc":  # the workload's shape is NHWC; PyTorch wants NCHW shape, channels_last memory
        t = t.permute(0, 3, 1, 2)
    return t


def build_conv(op, tensors, attrs, gen):
    layout = attrs.get("layout", "nchw")
    x = conv_input(tensors["x"], layout, gen)
    w = tensor(tensors["w"], gen) * (1.0 / math.sqrt(max(1, tensors["w"][1][1] * tensors["w"][1][2] * tensors["w"][1][3])))
    if layout == "nhwc":
        w = w.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
    args = conv_args(tensors, attrs)
    if op == "conv2d":
        return lambda: F.conv2d(x, w, **args)
    if op == "conv2d_bias_act":
        b = tensor(tensors["b"], gen)
        act = {"identity": lambda t: t, "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}[
            attrs.get("act", "relu")]
        return lambda: act(F.conv2d(x, w, **args) + b.view(1, -1, 1, 1))
    if op == "conv2d_backward":
        dy = conv_input(tensors["dy"], layout, gen)
        def backward():
            dx = torch.ops.aten.convolution_backward(dy, x, w, None, args["stride"], args["padding"],
                                                     args["dilation"], False, [0, 0], args["groups"],
                                                     [True, True, False])
            return dx
        return backward
    raise ValueError(op)


def _maximum(a, b):
    """max() with a Python number on either side: a clamp (no host-to-device copy)."""
    if not torch.is_tensor(a):
        a, b = b, a
    return torch.maximum(a, b) if torch.is_tensor(b) else torch.clamp(a, min=b)


def _minimum(a, b):
    if not torch.is_tensor(a):
        a, b = b, a
    return torch.minimum(a, b) if torch.is_tensor(b) else torch.clamp(a, max=b)


_POINTWISE_FUNCTIONS = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "relu": torch.relu, "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "sigmoid": torch.sigmoid, "tanh": torch.tanh,
    "silu": F.silu, "max": _maximum, "min": _minimum,
    "f32": lambda x: x.float(), "f16": lambda x: x.half(), "bf16": lambda x: x.bfloat16(),
}


def pointwise_program(tensors, expr):
    """(input names, output names, fn(**inputs) -> {output: tensor}) of a pointwise program.

    The language is a subset of Python's expressions, so the program becomes a Python
    function over PyTorch's functions: eagerly one kernel per operation, as a model written
    in PyTorch runs, or traced whole by torch.compile.
    """
    statements = [st.strip() for st in expr.split(";") if st.strip()]
    declared = set(tensors)
    assigned = []
    body = []
    for st in statements:
        name, eq, value = st.partition("=")
        if eq:
            assigned.append(name.strip())
            body.append((name.strip(), value.strip()))
        else:
            body.append((None, st))
    if body[0][0] is None:  # one bare expression: assigns the declared tensor it does not use
        used = set(compile(body[0][1], "<expr>", "eval").co_names)
        out = [n for n in declared if n not in used]
        assert len(out) == 1, f"cannot tell the output of {expr!r}"
        body = [(out[0], body[0][1])]
        assigned = out
    outputs = [n for n in assigned if n in declared]
    inputs = [n for n in tensors if n not in outputs]
    # Real Python source (not eval at run time), so that torch.compile traces the chain
    # into one graph instead of breaking on eval.
    lines = [f"def chain({', '.join(inputs)}):"]
    lines += [f"    {name} = {value}" for name, value in body]
    lines.append("    return {" + ", ".join(f"{n!r}: {n}.to(_dtype_{n})" for n in outputs) + "}")
    scope = dict(_POINTWISE_FUNCTIONS)
    scope.update({f"_dtype_{n}": DTYPES[tensors[n][0]] for n in outputs})
    exec("\n".join(lines), scope)
    fn = scope["chain"]
    return inputs, outputs, fn


def build_pointwise(tensors, attrs, gen, compiled=False):
    inputs, _, fn = pointwise_program(tensors, attrs["expr"])
    values = {}
    for n in inputs:
        t = tensor(tensors[n], gen, fill=None)
        t.uniform_(0.1, 2.0, generator=gen)  # opsched's generator draws inputs in this range too
        values[n] = t
    if compiled:
        fn = torch.compile(fn)
    return lambda: fn(**values)


def build(op, tensors, attrs, gen):
    if op == "pointwise":
        return build_pointwise(tensors, attrs, gen)
    if op == "scatter":
        return build_scatter(tensors, attrs, gen)
    if op == "reduce":
        return build_reduce(tensors, attrs, gen)
    if op.startswith("conv2d"):
        return build_conv(op, tensors, attrs, gen)
    raise ValueError(f"no PyTorch equivalent for {op}")


class Flush:
    """Empties L2 before each timed call the way opsched's measurement does
    (core/l2_flush.h), with a buffer twice the L2 size: "read" reads it (a sum: L2 is left
    holding clean lines, and what the last call left dirty is written back before the
    timed region), "overwrite" fills it (the write-back of its dirty lines then lands in
    the timed call), "none" does nothing."""

    def __init__(self, kind):
        self.kind = kind
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.buffer = torch.zeros(2 * l2, dtype=torch.uint8, device="cuda")
        self.words = self.buffer.view(torch.int64)

    def __call__(self, i):
        if self.kind == "read":
            self.words.sum()
        elif self.kind == "overwrite":
            self.buffer.fill_(i & 0xFF)


def report_flush(path):
    """The L2 flush an opsched bench report.json was measured with ("overwrite" for
    reports written before reports said)."""
    with open(path) as f:
        return json.load(f).get("l2_flush") or "overwrite"


def median_events(fn, flush, repeats, warmups=3):
    for _ in range(warmups):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for i in range(repeats):
        flush(i)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000 for s, e in zip(starts, ends))


def median_graph(fn, flush, repeats):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return median_events(graph.replay, flush, repeats)


def wall_per_call(fn, calls=2000):
    import time
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e6 / calls


def copy_bandwidth(flush, repeats, mib=512):
    """Device copy bandwidth in GB/s (bytes read plus bytes written per second), the
    reference the op issues measure bandwidth against."""
    src = torch.empty(mib << 20, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    us = median_events(lambda: dst.copy_(src), flush, repeats)
    return 2 * src.numel() / (us * 1e3)


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--opsched", help="opsched bench report.json of the same suite")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--benchmark", choices=["off", "on", "both"], default="off",
                    help="torch.backends.cudnn.benchmark (conv workloads)")
    ap.add_argument("--compile", action="store_true",
                    help="pointwise lines: also time torch.compile of the chain (and its compile time)")
    ap.add_argument("--l2-flush", choices=["read", "overwrite", "none"],
                    help="L2 flush before each timed call (default: the --opsched report's, else read); "
                         "it must match the report's")
    ap.add_argument("--json", help="write the comparison here")
    ap.add_argument("--markdown", help="write a Markdown table here")
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ours = {}
    if args.opsched:
        with open(args.opsched) as f:
            for e in json.load(f)["entries"]:
                if e.get("verdict") != "error":
                    ours[e["line"]] = e
    measured_with = report_flush(args.opsched) if args.opsched else None
    kind = args.l2_flush or measured_with or "read"
    if measured_with and kind != measured_with:
        sys.exit(f"compare_torch: {args.opsched} was measured with the {measured_with} L2 flush, "
                 f"not {kind}: the two sides would not be timed alike")
    flush = Flush(kind)
    copy_gbps = copy_bandwidth(flush, args.repeats)
    print(f"copy bandwidth: {copy_gbps:.0f} GB/s (torch copy_ of 512 MiB, read + write bytes); "
          f"L2 flush: {kind}")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.benchmark]
    rows = []
    for line, text, (op, tensors, attrs) in workloads.read_suite(args.suite):
        row = {"line": line, "workload": text, "op": op}
        try:
            for mode in modes:
                torch.backends.cudnn.benchmark = mode
                suffix = "" if len(modes) == 1 else ("_benchmark_on" if mode else "_benchmark_off")
                fn = build(op, tensors, attrs, gen)
                row["torch_us" + suffix] = median_events(fn, flush, args.repeats)
                row["torch_graph_us" + suffix] = median_graph(fn, flush, args.repeats)
                row["torch_wall_us" + suffix] = wall_per_call(fn)
            if op == "pointwise" and args.compile:
                # torch.compile of the same chain: its steady state, and its compile time
                # (the first call), which opsched does not have.
                torch._dynamo.reset()  # a fresh compile per chain (no recompile limit across lines)
                fn = build_pointwise(tensors, attrs, gen, compiled=True)
                start = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                row["torch_compile_s"] = time.perf_counter() - start
                row["torch_compiled_us"] = median_events(fn, flush, args.repeats)
                # The compiled chain replayed from a CUDA graph: its device time without
                # the Python call's host overhead, which the events above include where
                # the call takes longer than the flush before it (the figure then moves
                # with the host: 44 to 79 us over runs for one 47 us chain on the H200).
                try:
                    row["torch_compiled_graph_us"] = median_graph(fn, flush, args.repeats)
                except Exception as exc:  # not capturable: reported, the events figure stands
                    row["torch_compiled_graph_error"] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a workload PyTorch cannot run is reported, not fatal
            row["error"] = f"{type(exc).__name__}: {exc}"
        e = ours.get(line)
        if e and any(k.startswith("torch_us") for k in row):
            row["opsched_us"] = e["tuned"]["median_us"]
            row["opsched_wall_us"] = e.get("wall_us", 0)
            row["opsched_loop_device_us"] = e.get("loop_device_us", 0)
            row["opsched_host_us"] = e.get("host_us", 0)
            row["opsched_implementation"] = f'{e["tuned"]["implementation"]} {e["tuned"]["config"]}'
            torch_best = min(v for k, v in row.items() if k.startswith("torch_us"))
            row["torch_best_us"] = torch_best
            row["speedup"] = torch_best / row["opsched_us"] if row["opsched_us"] > 0 else 0
            if row.get("torch_compiled_us"):
                row["speedup_vs_compiled"] = row["torch_compiled_us"] / row["opsched_us"] if row["opsched_us"] > 0 else 0
            if row.get("torch_compiled_graph_us"):
                row["speedup_vs_compiled_graph"] = (row["torch_compiled_graph_us"] / row["opsched_us"]
                                                    if row["opsched_us"] > 0 else 0)
            row["gbps"] = e.get("gbps", 0)
            row["fraction_of_copy"] = row["gbps"] / copy_gbps if copy_gbps > 0 else 0
        rows.append(row)

    def fmt(v):
        return f"{v:9.2f}" if isinstance(v, (int, float)) and v else "        -"

    header = f"{'line':>4}  {'opsched us':>10} {'torch us':>9} {'graph us':>9} {'speedup':>8} {'os wall':>8} {'pt wall':>8}  workload"
    print(header)
    by_op = {}
    for r in rows:
        t = min((v for k, v in r.items() if k.startswith("torch_us")), default=0)
        g = min((v for k, v in r.items() if k.startswith("torch_graph_us")), default=0)
        w = min((v for k, v in r.items() if k.startswith("torch_wall_us")), default=0)
        print(f"{r['line']:>4}  {fmt(r.get('opsched_us'))} {fmt(t)} {fmt(g)} "
              f"{(str(round(r['speedup'], 2)) + 'x') if r.get('speedup') else '-':>8} "
              f"{fmt(r.get('opsched_wall_us'))[1:]} {fmt(w)[1:]}  {r['workload'][:90]}"
              + (f"  [{r['error']}]" if "error" in r else ""))
        if r.get("torch_compiled_us"):
            vs = r.get("speedup_vs_compiled")
            vg = r.get("speedup_vs_compiled_graph")
            print(f"      torch.compile {r['torch_compiled_us']:.2f} us (compiled in {r['torch_compile_s']:.1f} s)"
                  + (f", opsched {vs:.2f}x of it" if vs else "")
                  + (f"; from a CUDA graph {r['torch_compiled_graph_us']:.2f} us, opsched {vg:.2f}x of it" if vg else ""))
        if r.get("fraction_of_copy"):
            print(f"      opsched {r['gbps']:.0f} GB/s, {100 * r['fraction_of_copy']:.0f}% of copy")
        if r.get("speedup"):
            by_op.setdefault(r["op"], []).append(r["speedup"])
    summary = {op: {"workloads": len(v), "geomean_speedup": geomean(v), "min_speedup": min(v)}
               for op, v in by_op.items()}
    for op, s in summary.items():
        print(f"{op}: geomean speedup over PyTorch {s['geomean_speedup']:.2f}x over {s['workloads']} "
              f"workloads (slowest {s['min_speedup']:.2f}x)")
    for key, what in (("speedup_vs_compiled", "torch.compile"), ("speedup_vs_compiled_graph", "torch.compile from a CUDA graph")):
        v = [r[key] for r in rows if r.get(key)]
        if v:
            below = sum(1 for x in v if x < 1)
            summary[key] = {"workloads": len(v), "geomean": geomean(v), "min": min(v), "below_1": below}
            print(f"vs {what}: geomean {geomean(v):.2f}x over {len(v)} workloads (slowest {min(v):.2f}x, "
                  f"{below} below 1.0x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "copy_gbps": copy_gbps, "l2_flush": kind, "rows": rows, "summary": summary}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"Device: {torch.cuda.get_device_name()}, PyTorch {torch.__version__}, "
                    f"copy bandwidth {copy_gbps:.0f} GB/s, L2 flush: {kind}\n\n")
            f.write("| line | workload | opsched µs | opsched choice | PyTorch µs | PyTorch graph µs | "
                    "speedup | opsched wall µs | PyTorch wall µs | opsched GB/s (% of copy) |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                t = min((v for k, v in r.items() if k.startswith("torch_us")), default=0)
                g = min((v for k, v in r.items() if k.startswith("torch_graph_us")), default=0)
                w = min((v for k, v in r.items() if k.startswith("torch_wall_us")), default=0)
                f.write(f"| {r['line']} | `{r['workload']}` | {r.get('opsched_us', 0):.2f} | "
                        f"{r.get('opsched_implementation', '-')} | {t:.2f} | {g:.2f} | "
                        f"{r.get('speedup', 0):.2f}x | {r.get('opsched_wall_us', 0):.2f} | {w:.2f} | "
                        f"{r.get('gbps', 0):.0f} ({100 * r.get('fraction_of_copy', 0):.0f}%) |\n")
            compiled = [r for r in rows if r.get("torch_compiled_us")]
            if compiled:
                f.write("\n| line | torch.compile µs | from a CUDA graph µs | compiled in s | opsched vs compile | "
                        "vs compile from a graph |\n|---|---|---|---|---|---|\n")
                for r in compiled:
                    f.write(f"| {r['line']} | {r['torch_compiled_us']:.2f} | {r.get('torch_compiled_graph_us', 0):.2f} | "
                            f"{r['torch_compile_s']:.1f} | {r.get('speedup_vs_compiled', 0):.2f}x | "
                            f"{r.get('speedup_vs_compiled_graph', 0):.2f}x |\n")
            for op, s in summary.items():
                if "geomean_speedup" in s:
                    f.write(f"\n{op}: geomean speedup {s['geomean_speedup']:.2f}x, slowest {s['min_speedup']:.2f}x\n")
                else:
                    f.write(f"\n{op}: geomean {s['geomean']:.2f}x, slowest {s['min']:.2f}x, {s['below_1']} below 1.0x\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
