#!/usr/bin/env bash
# h92 (H200): the chain kernels' packed accesses without a per-group address test (alignment checked at
# launch) and the periodic inputs' position through a FastDivmod. pointwise_test on the GPU (with the new
# SpecialisedChainsServeMisalignedTensors); then the tuned pointwise suites (pointwise.txt and
# pointwise_train.txt, 29 lines) and the held-out pointwise file served from the shipped logs, beside PyTorch
# eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h92; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 150 .bundle/run pointwise_test > $W/pointwise_test.txt 2>&1
echo "pointwise_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/pointwise_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $W/pointwise_test.txt | head -5; save
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
grep -hv '^#' bench/suites/pointwise_heldout.txt | grep . > $W/heldout.txt
for n in tuned heldout; do
  timeout 100 .bundle/run opsched bench --suite $W/$n.txt --records $L $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s: $(grep -E 'geomean' $W/bench_$n.txt)"; save
done
left=$(( 560 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite $W/tuned.txt --opsched $W/tuned/report.json --compile \
   --json $W/compare_tuned.json --markdown $W/compare_tuned.md > $W/compare_tuned.txt 2>&1; echo "compare tuned rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_tuned.txt; save
echo "done $(( $(date +%s) - T0 ))s"; save
