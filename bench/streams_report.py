#!/usr/bin/env python3
"""Two streams against one for the conv2d backward (MXNet #14006), from tuning records.

    bazel-bin/tools/opsched records export LOG | python3 bench/streams_report.py [--budget MIB ...]

For every conv2d_backward workload in the records: the best measured one-stream and
two-stream configs (time and workspace), the pairs measured both ways with the same
algorithms (what the second stream alone changes: time and extra workspace), and the
choice the tuner makes under each workspace budget — the fastest `ok` record whose
workspace fits, which is what `opsched tune --memory-budget` keeps (it does not even
measure the candidates over budget).
"""
import argparse
import json
import sys


def knobs(record):
    out = {}
    for k in record.get("config", {}).get("knobs", []):
        out[k["name"]] = k.get("s", k.get("i"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=float, nargs="*", default=[16, 64, 256],
                    help="workspace budgets in MiB (besides no limit)")
    args = ap.parse_args()
    by_workload = {}
    for line in sys.stdin:
        r = json.loads(line)
        if r["workload"]["op"] != "conv2d_backward" or r.get("status") != "OK":
            continue
        k = knobs(r)
        by_workload.setdefault(r["workload"]["key"], []).append(
            (r["stats"]["median_us"], int(r.get("workspace_bytes", 0)), r["implementation"], k))
    mib = 1 << 20
    print("| workload | best 1 stream µs (MiB) | best 2 streams µs (MiB) | same algorithms: 2 vs 1 "
          "(pairs, median speedup, extra MiB) | choice with no limit | "
          + " | ".join(f"choice within {b:g} MiB" for b in args.budget) + " |")
    print("|---" * (5 + len(args.budget)) + "|")
    for key, rows in by_workload.items():
        one = [r for r in rows if int(r[3].get("streams", 1)) == 1]
        two = [r for r in rows if int(r[3].get("streams", 1)) == 2]
        def best(rs):
            if not rs:
                return "-"
            t, ws, impl, k = min(rs)
            return f"{t:.1f} ({ws / mib:.1f})"
        pairs = []
        for t2, ws2, impl, k in two:
            match = [r for r in one if r[2] == impl and {**r[3], "streams": 2} == {**k, "streams": 2}]
            if match:
                t1, ws1 = match[0][0], match[0][1]
                pairs.append((t1 / t2, (ws2 - ws1) / mib))
        pairs.sort()
        same = (f"{len(pairs)}, {pairs[len(pairs) // 2][0]:.2f}x, {pairs[len(pairs) // 2][1]:.1f}"
                if pairs else "-")
        def choice(limit):
            fits = [r for r in rows if limit is None or r[1] <= limit * mib]
            if not fits:
                return "none fits"
            t, ws, impl, k = min(fits)
            return f"{k.get('streams', 1)} stream(s), {t:.1f} µs, {ws / mib:.1f} MiB"
        short = key.split(" stride")[0].replace("conv2d_backward ", "")
        print(f"| `{short}` | {best(one)} | {best(two)} | {same} | {choice(None)} | "
              + " | ".join(choice(b) for b in args.budget) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
