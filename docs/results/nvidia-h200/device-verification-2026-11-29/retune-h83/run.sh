#!/usr/bin/env bash
# h83 (H200): the pointwise tests (host-checked, with the finite bounds at infinite inputs) and
# device_reference_test; then pointwise.txt and pointwise_train.txt (29 tuned lines, never the held-out
# files) tuned afresh with candidates checked on the device (48 trials, early stop 16, the shipped logs as
# seeds); then the 8-op chain and the held-out pointwise file served from the shipped log plus the new one.
# b: pointwise_test on the GPU, and that report beside PyTorch eager and torch.compile (compare_torch.py --compile).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h83; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
if [ "$1" = a ]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
  for t in device_reference_test; do
    timeout 120 .bundle/run $t > $W/$t.txt 2>&1
    echo "$t rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ')"
  done
  grep -h "checked runs" $W/device_reference_test.txt | tr '\n' ' '; echo; save
  grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
  timeout 300 .bundle/run opsched tune --suite $W/tuned.txt --records $W/retuned.log --trials 48 --early-stop 16 \
    --time-budget 280 --transfer $L --min-time-ms 5 --no-progress --wide > $W/tune.txt 2>&1
  echo "tune rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^session' $W/tune.txt)"; save
  sed -n 14p bench/suites/pointwise.txt > $W/chain8.txt; grep -v '^#' bench/suites/pointwise_heldout.txt | grep . >> $W/chain8.txt
  for v in shipped retuned; do
    logs="$L"; [ $v = retuned ] && logs="$L $W/retuned.log"
    timeout 120 .bundle/run opsched bench --suite $W/chain8.txt --records $logs $B --baseline /tmp/$v.json --report $W/pw_$v > $W/bench_pw_$v.txt 2>&1
    echo "bench $v rc=$? $(( $(date +%s) - T0 ))s"
  done
else
  [ -f $W/pw_retuned/report.json ] || tar xzf $H/res_a.tar.gz -C /tmp
  timeout 120 .bundle/run pointwise_test > $W/pointwise_test.txt 2>&1
  echo "pointwise_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/pointwise_test.txt | tr '\n' ' ')"
  left=$(( 570 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/chain8.txt --opsched $W/pw_retuned/report.json --compile \
     --json $W/compare_pointwise.json --markdown $W/compare_pointwise.md > $W/compare_pointwise.txt 2>&1; echo "compare pw rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_pointwise.txt
fi
echo "done $(( $(date +%s) - T0 ))s"; save
