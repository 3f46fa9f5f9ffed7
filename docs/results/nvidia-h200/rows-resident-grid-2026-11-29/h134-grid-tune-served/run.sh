#!/usr/bin/env bash
# h134 (H200): the rows kernel's resident grid. Line 22's whole reduce_cuda_rows space by grid (resident 0 and 1 side
# by side); dtypes.txt's 8 row-reduction lines retuned over reduce_cuda_rows (48 xgb trials, seeded with the shipped
# records); dtypes.txt served from the shipped logs and those records, beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h134; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 150 .bundle/run opsched tune --suite $W/line22.txt --records $W/grid22.log --policy grid --trials 2000 \
  --implementations reduce_cuda_rows --no-progress --wide > $W/grid22.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s"; tail -2 $W/grid22.txt | cut -c1-200; save
timeout 200 .bundle/run opsched tune --suite $W/rows_lines.txt --records $W/rows_new.log --trials 48 --transfer $L \
  --implementations reduce_cuda_rows --no-progress --wide > $W/tune_rows.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/tune_rows.txt | cut -c1-200; save
S=$PWD/bench/suites/dtypes.txt
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 100 .bundle/run opsched bench --suite $S --records $L $W/rows_new.log $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
left=$(( 590 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite $S --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes.txt; grep -A1 "^ *22 " $W/compare_dtypes.txt | cut -c1-80
echo "done $(( $(date +%s) - T0 ))s"; save
