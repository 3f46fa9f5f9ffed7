#!/usr/bin/env bash
# h122 (H200): a reference tuning of the whole held-out models file (30 lines; 48 xgb trials of every implementation,
# seeded with what the Runtime serves; into a log kept apart: never served, never fitted on), then the file served as
# shipped (the shipped logs and model) against it (served/best) and beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h122; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
S=$PWD/bench/suites/models/heldout.txt
timeout 330 .bundle/run opsched tune --suite $S --records $W/reference_heldout.log --trials 48 --transfer $L \
  --model $R/model.opsm --no-progress --wide > $W/tune_reference.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/tune_reference.txt; save
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 80 .bundle/run opsched bench --suite $S --records $L --model $R/model.opsm --reference $W/reference_heldout.log \
  $B --baseline /tmp/h.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; grep "geomean" $W/bench_heldout.txt; save
left=$(( 585 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite $S --opsched $W/heldout/report.json \
   --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_heldout.txt
echo "done $(( $(date +%s) - T0 ))s"; save
