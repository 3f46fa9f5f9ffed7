#!/usr/bin/env bash
# h131 (H200): the held-out models file served as shipped with the neighbour-blend change (2f0587e), against h122's
# reference tuning, beside PyTorch; then dtypes.txt served from the shipped logs, beside PyTorch (a second sample
# after h129).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h131; R=bench/records/nvidia-h200; cp $H/*.sh $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
S=$PWD/bench/suites/models/heldout.txt
timeout 100 .bundle/run opsched bench --suite $S --records $L --model $R/model.opsm --reference bench/reference/nvidia-h200/heldout.log \
  $B --baseline /tmp/h.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; grep "geomean" $W/bench_heldout.txt; save
(cd bench && timeout 200 python3 compare_torch.py --suite $S --opsched $W/heldout/report.json \
   --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_heldout.txt; save
S=$PWD/bench/suites/dtypes.txt
timeout 100 .bundle/run opsched bench --suite $S --records $L $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 200 python3 compare_torch.py --suite $S --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_dtypes.txt
echo "done $(( $(date +%s) - T0 ))s"; save
