#!/usr/bin/env bash
# h99 (H200): pointwise kernels take consecutive tiles per block (TileSpan), the interpreter prefetching
# its next tile's dense inputs into L2. pointwise_test on the GPU; the 29 tuned pointwise lines tuned again
# (xgb, 48 trials) into a fresh log; the shipped pointwise log less its items>1 records of the changed
# kernels (pw_kept.log) plus that log serve the held-out pointwise file (never tuned) and the tuned suites,
# each beside PyTorch eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h99; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
for t in pointwise_test; do
  timeout 150 .bundle/run $t > $W/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ')"
  grep -E "FAILED|Failure" $W/$t.txt | head -5
done; save
grep -hv '^#' bench/suites/pointwise_heldout.txt | grep . > $W/heldout.txt
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
timeout 200 .bundle/run opsched tune --suite $W/tuned.txt --records $W/new_pw.log --trials 48 --no-progress > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/tune.txt; save
L="$R/conv.log $R/dtypes.log $R/models.log $H/pw_kept.log $W/new_pw.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for n in tuned heldout; do
  timeout 100 .bundle/run opsched bench --suite $W/$n.txt --records $L $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 590 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/$n.txt --opsched $W/$n/report.json --compile \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
