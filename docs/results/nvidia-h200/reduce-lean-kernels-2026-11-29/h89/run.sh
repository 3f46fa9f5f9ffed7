#!/usr/bin/env bash
# h89 (H200): the lean reduce kernels (32-bit item and chunk numbers, the op a compile-time constant in the
# rows kernel, FinishTiles for many outputs of many parts). a: reduce_test on the GPU; the reduce lines of
# dtypes.txt and reduce.txt served from the shipped logs (records measured with the old kernels); then
# tuned afresh into a new log (48 trials, the shipped logs as seeds; lines 22 and 24 of dtypes.txt every
# legal candidate); then served from the shipped logs plus the new one. b: beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h89; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
if [ "$1" = a ]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
  timeout 200 .bundle/run reduce_test > $W/reduce_test.txt 2>&1
  echo "reduce_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/reduce_test.txt | tr '\n' ' ')"
  grep -E "FAILED|Failure" $W/reduce_test.txt | head -5; save
  sed -n '22,33p' bench/suites/dtypes.txt | grep '^reduce' > $W/dtypes_reduce.txt
  grep '^reduce' bench/suites/reduce.txt > $W/reduce_suite.txt
  sed -n '22p;24p' bench/suites/dtypes.txt > $W/two.txt; cat $W/dtypes_reduce.txt $W/reduce_suite.txt > $W/reduce_all.txt
  timeout 150 .bundle/run opsched bench --suite $W/reduce_all.txt --records $L $B --baseline /tmp/s.json --report $W/shipped > $W/bench_shipped.txt 2>&1
  echo "bench shipped rc=$? $(( $(date +%s) - T0 ))s"; save
  timeout 120 .bundle/run opsched tune --suite $W/two.txt --records $W/new.log --policy grid --trials 5000 \
    --time-budget 110 --min-time-ms 5 --no-progress --wide > $W/tune_grid.txt 2>&1
  echo "grid rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^session' $W/tune_grid.txt)"; save
  timeout 200 .bundle/run opsched tune --suite $W/reduce_all.txt --records $W/new.log --trials 48 --early-stop 16 \
    --time-budget 190 --transfer $L --min-time-ms 5 --no-progress --wide > $W/tune.txt 2>&1
  echo "tune rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^session' $W/tune.txt)"; save
  timeout 100 .bundle/run opsched bench --suite $W/reduce_all.txt --records $L $W/new.log $B --baseline /tmp/n.json --report $W/new > $W/bench_new.txt 2>&1
  echo "bench new rc=$? $(( $(date +%s) - T0 ))s"
else
  [ -f $W/new/report.json ] || tar xzf $H/res_a.tar.gz -C /tmp
  timeout 150 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $L $W/new.log $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
  echo "bench dtypes rc=$? $(( $(date +%s) - T0 ))s"
  (cd bench && timeout 200 python3 compare_torch.py --suite suites/dtypes.txt --opsched $W/dtypes/report.json \
     --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare dtypes rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes.txt
  (cd bench && timeout 150 python3 compare_torch.py --suite $W/reduce_suite.txt --opsched $W/new/report.json \
     --json $W/compare_reduce.json --markdown $W/compare_reduce.md > $W/compare_reduce.txt 2>&1; echo "compare reduce rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_reduce.txt
fi
echo "done $(( $(date +%s) - T0 ))s"; save
