#!/usr/bin/env python3
"""dtypes.txt with the read flush and with the overwrite, same run (h74 a, b), beside PyTorch flushed
alike, and the read flush once more (h74 d): per line opsched and PyTorch us, speedup, % of copy."""
import json, math, os

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dtypes")
load = lambda name: json.load(open(os.path.join(here, name)))
a, b, d = load("compare_dtypes_read.json"), load("compare_dtypes_overwrite.json"), load("compare_dtypes_read_run_d.json")
rb = {r["line"]: r for r in b["rows"]}
rd = {r["line"]: r for r in d["rows"]}
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print(f"copy GB/s: read {a['copy_gbps']:.0f}, overwrite {b['copy_gbps']:.0f}, read again {d['copy_gbps']:.0f}")
print(f"{'line':>4} {'os read':>8} {'os ovw':>8} {'pt read':>8} {'pt ovw':>8} {'x read':>6} {'x ovw':>6} {'x again':>7} "
      f"{'%cp read':>8} {'%cp ovw':>7}  workload")
cols = {"a": [], "b": [], "d": []}
for r in a["rows"]:
    o, e = rb[r["line"]], rd[r["line"]]
    for k, x in (("a", r), ("b", o), ("d", e)):
        cols[k].append(x["speedup"])
    print(f"{r['line']:>4} {r['opsched_us']:8.2f} {o['opsched_us']:8.2f} {r['torch_best_us']:8.2f} {o['torch_best_us']:8.2f} "
          f"{r['speedup']:6.2f} {o['speedup']:6.2f} {e['speedup']:7.2f} {100 * r['fraction_of_copy']:8.0f} "
          f"{100 * o['fraction_of_copy']:7.0f}  {r['workload'][:70]}")
for k, name in (("a", "read"), ("b", "overwrite"), ("d", "read again")):
    v = cols[k]
    print(f"{name}: geomean {geo(v):.3f}, slowest {min(v):.2f}, below 1.0: {sum(x < 1 for x in v)} of {len(v)}")
