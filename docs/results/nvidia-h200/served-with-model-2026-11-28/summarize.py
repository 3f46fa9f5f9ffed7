#!/usr/bin/env python3
"""summarize.py BENCH_TXT COMPARE_JSON [LABEL]: the held-out models file's figures from one
run: PyTorch speedup (device, geomean; lines at 1.0x or more; slowest), wall speedup (our
wall time per call against PyTorch's, its faster setting of cudnn.benchmark), and
served/best against the reference tuning (bench's t/oracle column)."""
import json
import math
import re
import sys


def gm(x):
    return math.exp(sum(map(math.log, x)) / len(x))


bench, compare = sys.argv[1], sys.argv[2]
label = sys.argv[3] if len(sys.argv) > 3 else bench
rows = json.load(open(compare))["rows"]
device = [r["speedup"] for r in rows]
wall = []
for r in rows:
    setting = "off" if r["torch_us_benchmark_off"] <= r["torch_us_benchmark_on"] else "on"
    wall.append(r[f"torch_wall_us_benchmark_{setting}"] / r["opsched_wall_us"])
served = []
for line in open(bench):
    if re.match(r"\s*\d+\s+(conv2d|reduce|scatter)", line):
        numbers = [p for p in line.split() if re.fullmatch(r"\d+\.\d+", p)]
        served.append(float(numbers[-2]))  # t/oracle (h/oracle is the last)
print(f"{label}: {gm(device):.3f}x PyTorch device ({sum(s >= 1 for s in device)} of {len(device)} >= 1.0, "
      f"slowest {min(device):.2f}), {gm(wall):.3f}x wall, served/best {gm(served):.3f} (worst {max(served):.3f})")
