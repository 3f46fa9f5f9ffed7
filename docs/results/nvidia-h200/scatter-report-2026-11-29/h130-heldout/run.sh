#!/usr/bin/env bash
# h130 (H200): dtypes.txt lines 22 and 23 (bf16 row sums) taken apart (rows22: production's rows kernel, a persistent
# warp-a-row kernel, a plain read of the same bytes; torch22.py: PyTorch's sums and copies); then the held-out models
# file served as shipped (the new scatter report included), against h122's reference tuning, beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h130; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.py $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 90 $H/rows22 > $W/rows22.txt 2>&1; echo "rows22 rc=$? $(( $(date +%s) - T0 ))s"
timeout 60 python3 $H/torch22.py > $W/torch22.txt 2>&1; cat $W/torch22.txt; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
S=$PWD/bench/suites/models/heldout.txt
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 100 .bundle/run opsched bench --suite $S --records $L --model $R/model.opsm --reference bench/reference/nvidia-h200/heldout.log \
  $B --baseline /tmp/h.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; grep "geomean" $W/bench_heldout.txt; save
left=$(( 585 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite $S --opsched $W/heldout/report.json \
   --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_heldout.txt
echo "done $(( $(date +%s) - T0 ))s"; save
