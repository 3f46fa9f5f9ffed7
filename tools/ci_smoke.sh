#!/usr/bin/env bash
# The CI bench smoke test: tune a tiny suite on the CPU, bench it against a baseline it
# writes, and check that the reports exist and are well formed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
bazel build //tools:opsched
opsched=bazel-bin/tools/opsched
$opsched tune --suite bench/suites/ci_smoke.txt --records "$out/smoke.log" --target cpu \
  --policy random --trials 4 --min-time-ms 2 --no-progress
$opsched bench --suite bench/suites/ci_smoke.txt --records "$out/smoke.log" --target cpu \
  --baseline "$out/baseline.json" --update-baseline --report "$out/report" --min-time-ms 2 --rounds 2
# A second run against that baseline: CPU timings are noisy, so its verdict is reported
# but not gated on here (exit 1 = a regression verdict, 2 = an error).
set +e
$opsched bench --suite bench/suites/ci_smoke.txt --records "$out/smoke.log" --target cpu \
  --baseline "$out/baseline.json" --report "$out/report2" --min-time-ms 2 --rounds 2
code=$?
set -e
[ "$code" -le 1 ] || { echo "ci_smoke: opsched bench failed ($code)"; exit 1; }
python3 - "$out" <<'PY'
import json, sys, xml.dom.minidom
out = sys.argv[1]
for run in ("report", "report2"):
    report = json.load(open(f"{out}/{run}/report.json"))
    assert report["entries"], "no entries"
    for e in report["entries"]:
        assert e["verdict"] in ("ok", "regression", "improvement", "new"), e
        assert e["tuned"]["median_us"] > 0 and e["tuned"]["samples"] > 0, e
    assert sorted(o["op"] for o in report["ops"]) == ["reduce", "scatter"], report["ops"]
    md = open(f"{out}/{run}/report.md").read()
    assert md.startswith("# opsched bench") and "| line | workload |" in md
    svg = xml.dom.minidom.parse(f"{out}/{run}/speedups.svg")
    assert svg.documentElement.tagName == "svg"
baseline = json.load(open(f"{out}/baseline.json"))
assert len(baseline["entries"]) == 3
print("ci_smoke: reports well formed:", out)
PY
