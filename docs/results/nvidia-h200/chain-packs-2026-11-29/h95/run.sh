#!/usr/bin/env bash
# h95 (H200): the final code (449fbb9; reduce unchanged since h91). pointwise_test on the GPU; the held-out pointwise
# file (22 chains never tuned) and the tuned pointwise suites served from the shipped logs, beside PyTorch eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h95; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
for t in pointwise_test; do
  timeout 150 .bundle/run $t > $W/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ')"
  grep -E "FAILED|Failure" $W/$t.txt | head -5
done; save
grep -hv '^#' bench/suites/pointwise_heldout.txt | grep . > $W/heldout.txt
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
for n in heldout tuned; do
  timeout 100 .bundle/run opsched bench --suite $W/$n.txt --records $L $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 280 - ($(date +%s) - T0) )); [ $n = tuned ] && left=$(( 560 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/$n.txt --opsched $W/$n/report.json --compile \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
