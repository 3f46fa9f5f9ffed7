#!/usr/bin/env bash
# h129 (H200): dtypes.txt's scatter lines retuned over the scatter whose bad-index report needs no per-block count
# (48 xgb trials, seeded with the shipped records); dtypes.txt served from the shipped logs and those records, beside
# PyTorch; then the held-out models file served as shipped, beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h129; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
S=$PWD/bench/suites/dtypes.txt
timeout 100 .bundle/run opsched bench --suite $S --records $L $B --baseline /tmp/d0.json --report $W/dtypes_before > $W/bench_dtypes_before.txt 2>&1
echo "bench before rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 200 .bundle/run opsched tune --suite $W/scatter_lines.txt --records $W/scatter_new.log --trials 48 --transfer $L \
  --no-progress --wide > $W/tune_scatter.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/tune_scatter.txt | cut -c1-200; save
timeout 100 .bundle/run opsched bench --suite $S --records $L $W/scatter_new.log $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 200 python3 compare_torch.py --suite $S --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes.txt; grep "^ *7 " $W/compare_dtypes.txt | cut -c1-80
echo "done $(( $(date +%s) - T0 ))s"; save
