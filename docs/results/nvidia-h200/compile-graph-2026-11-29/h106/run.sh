#!/usr/bin/env bash
# h106 (H200): the batch-norm planner folds a division by a constant into the factor, so the hard-sigmoid
# squeeze-excite scale (pointwise_train.txt line 13) can run on the batch-norm kernel. That line tuned again over
# every implementation (48 trials) into hs.log; then the tuned pointwise suites (with hs.log) and the held-out
# pointwise file (never tuned) served beside PyTorch eager and torch.compile (events and CUDA graph).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h106; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 100 .bundle/run opsched tune --suite $W/hs.txt --records $W/hs.log --trials 48 --no-progress > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -4 $W/tune.txt; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log $W/hs.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
grep -hv '^#' bench/suites/pointwise_heldout.txt | grep . > $W/heldout.txt
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
for n in tuned heldout; do
  timeout 100 .bundle/run opsched bench --suite $W/$n.txt --records $L $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 590 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/$n.txt --opsched $W/$n/report.json --compile \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
