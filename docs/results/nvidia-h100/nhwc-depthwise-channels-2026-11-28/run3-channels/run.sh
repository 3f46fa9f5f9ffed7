#!/usr/bin/env bash
# run 3 (h27): the nhwc staged depthwise kernel with a `channels` knob (32 as before, or 16). A/B against HEAD's build (prev) with the shipped records (channels 32 everywhere), two rounds; every config of four layers with 144 or 240 channels (grid) by this build; the 11 tuned channels-last lines re-tuned by this build (xgb 24, old best first); A/B again with those records; compare_torch; conv2d_test (nhwc/depthwise) on the GPU.
set -uo pipefail
T0=$(date +%s); ROOT=$(pwd)
W=/tmp/res3; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h27/*.txt $W/
H=.out/h27; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res3 && cd - > /dev/null; }
B="--model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/conv.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  timeout 60 .bundle/run opsched_prev bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 60 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
done
echo "ab $(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched tune --suite $H/grid.txt --records $W/grid.log --policy grid --trials 400 --implementations conv2d_cuda_depthwise_staged_nhwc --min-time-ms 5 --no-progress --wide > $W/grid.txt 2>&1
echo "grid $(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched tune --suite $H/tuned.txt --records $W/retune.log --transfer $RECS --model $R/model.opsm --trials 24 --min-time-ms 10 --no-progress --wide > $W/retune.txt 2>&1
echo "retune rc=$? $(( $(date +%s) - T0 ))s"; save
for i in 1 2; do
  timeout 60 .bundle/run opsched_prev bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bp2.json --report /tmp/rp2 > $W/ab2_before_$i.txt 2>&1
  timeout 60 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $W/retune.log $B --baseline /tmp/bn2.json --report /tmp/rn2 > $W/ab2_after_$i.txt 2>&1
done
echo "ab2 $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rn2/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
save
timeout 200 .bundle/run_tests --gtest_filter='*Nhwc*:*Depthwise*:*depthwise*' > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[       OK|^\[  FAILED" $W/gpu-tests.txt | head -30
echo "done $(( $(date +%s) - T0 ))s"; save
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2 ab2_before_1 ab2_after_1 ab2_before_2 ab2_after_2; do echo $f; grep -E "^ +[0-9]+ +conv2d" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^conv2d_/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
$ROOT/.bundle/run opsched records export $W/grid.log > $W/grid.jsonl 2>/dev/null
python3 - $W/grid.jsonl <<'PY'
import json, sys
best = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    k = r["workload"]["key"][:34]
    cfg = {kn["name"]: kn.get("i") for kn in r.get("config", {}).get("knobs", [])}
    t = r.get("stats", {}).get("median_us")
    if t is None: continue
    ch = cfg.get("channels", "32")
    if t < best.get((k, ch), (1e9,))[0]: best[(k, ch)] = (t, cfg)
for (k, ch), (t, cfg) in sorted(best.items()): print(k, "channels", ch, "%.2f" % t, cfg)
PY
grep -E "speedup|x " compare.txt | tail -20
