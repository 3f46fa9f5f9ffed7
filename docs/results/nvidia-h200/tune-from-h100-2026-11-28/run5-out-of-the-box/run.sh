#!/usr/bin/env bash
# h48 (H200): out of the box on an H200 with the shipped H200 logs (bench/records/nvidia-h200, no model):
# the held-out models file (served/best against h46's reference tuning) and the held-out pointwise
# file, beside PyTorch; then dtypes.txt tuned further (resumed to 40 trials a workload) and measured again.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h48; R=bench/records/nvidia-h200; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 120 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --reference $H/reference_heldout.log $B \
  --baseline /tmp/b1.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench heldout rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare heldout rc=$?")
echo "$(( $(date +%s) - T0 ))s"; save
timeout 120 .bundle/run opsched bench --suite bench/suites/pointwise_heldout.txt --records $L $B --baseline /tmp/b3.json --report $W/pw > $W/bench_pointwise_heldout.txt 2>&1
echo "bench pointwise heldout rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 200 python3 compare_torch.py --suite ../bench/suites/pointwise_heldout.txt --opsched $W/pw/report.json --compile \
   --json $W/compare_pointwise_heldout.json --markdown $W/compare_pointwise_heldout.md > $W/compare_pointwise_heldout.txt 2>&1; echo "compare pw rc=$?")
echo "$(( $(date +%s) - T0 ))s"; save
cp $R/dtypes.log $W/dtypes.log
timeout 150 .bundle/run opsched tune --suite bench/suites/dtypes.txt --records $W/dtypes.log --trials 40 --time-budget 120 \
  --transfer $L bench/records/nvidia-h100/dtypes.log --min-time-ms 10 --no-progress --wide > $W/tune_dtypes40.txt 2>&1
echo "tune dtypes rc=$? $(( $(date +%s) - T0 ))s"; save
L2="$R/conv.log $W/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 150 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $L2 $B --baseline /tmp/b2.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench dtypes rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 200 python3 compare_torch.py --suite ../bench/suites/dtypes.txt --opsched $W/dtypes/report.json \
   --benchmark both --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare dtypes rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean speedup" $W/compare_*.txt; save
