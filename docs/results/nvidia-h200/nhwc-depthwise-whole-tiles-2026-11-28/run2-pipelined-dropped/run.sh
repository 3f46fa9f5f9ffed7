#!/usr/bin/env bash
# h58 (H200): nhwc staged depthwise, whole-tile extents and blocks of 2 or 4 tiles (two window buffers, the next
# staged while the current is computed). GPU tests; every config of dtypes.txt line 37 (grid); the other five
# 16-bit channels-last layers tuned (xgb, 64 trials, the nhwc staged kernel alone, seeded by the shipped logs);
# the six served from the shipped logs with and without the new records, beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h58; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
export LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run conv2d_test --gtest_filter='*Nhwc*:*Depthwise*:*depthwise*' > $W/gpu-tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $W/gpu-tests.txt | head -10
TEST_SRCDIR=/tmp/rf .bundle/run main_launch_test > $W/main-launch-test.txt 2>&1; echo "main_launch_test rc=$?"; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 200 .bundle/run opsched tune --suite $H/line37.txt --records $W/line37.log --policy grid --trials 5000 \
  --implementations conv2d_cuda_depthwise_staged_nhwc --min-time-ms 2 --min-repeats 5 --no-progress --wide > $W/tune_grid37.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 200 .bundle/run opsched tune --suite $H/others.txt --records $W/others.log --policy xgb --trials 64 --transfer $L \
  --implementations conv2d_cuda_depthwise_staged_nhwc --min-time-ms 4 --no-progress --wide > $W/tune_others.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; save
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 100 .bundle/run opsched bench --suite $H/nhwc.txt --records $L $B --baseline /tmp/b1.json --report $W/before > $W/bench_before.txt 2>&1
timeout 100 .bundle/run opsched bench --suite $H/nhwc.txt --records $L $W/line37.log $W/others.log $B --baseline /tmp/b2.json --report $W/after > $W/bench_after.txt 2>&1
echo "bench $(( $(date +%s) - T0 ))s"; save
for s in before after; do
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/nhwc.txt --opsched $W/$s/report.json \
   --benchmark both --json $W/compare_$s.json --markdown $W/compare_$s.md > $W/compare_$s.txt 2>&1; echo "compare $s rc=$?")
done
.bundle/run opsched records export $W/line37.log > $W/line37.jsonl 2>/dev/null
python3 - $W/line37.jsonl > $W/grid37-best.txt <<'PY'
import json, sys, collections
best = {}; n = collections.Counter()
for l in open(sys.argv[1]):
    r = json.loads(l)
    cfg = {kn["name"]: int(kn.get("i")) for kn in r.get("config", {}).get("knobs", [])}
    t = r.get("stats", {}).get("median_us")
    if t is None or r.get("status") != "OK": continue
    for key in ("tiles", "rows", "columns"):
        k = (key, cfg.get(key, 1)); n[k] += 1
        if t < best.get(k, (1e9,))[0]: best[k] = (t, cfg)
for k, (t, cfg) in sorted(best.items()):
    print("%s=%s: %d configs, best %.2f us" % (k[0], k[1], n[k], t), ",".join("%s=%s" % kv for kv in sorted(cfg.items())))
PY
cat $W/grid37-best.txt
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt; save
