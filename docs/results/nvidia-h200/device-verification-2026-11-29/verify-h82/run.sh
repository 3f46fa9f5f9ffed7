#!/usr/bin/env bash
# h82 (H200): the pointwise device verification: device_reference_test (every pointwise case, the CPU
# and GPU references cross-checked), then decide.txt's ten tuned lines tuned twice into fresh logs with the
# same flags (24 trials, early stop 8, the shipped logs as seeds), checking candidates on the host
# (--verify host, as before) and on the device (--verify auto).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h82; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 150 .bundle/run device_reference_test > $W/device_reference_test.txt 2>&1
echo "device_reference_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/device_reference_test.txt | tr '\n' ' ')"
grep -E "checked runs|FAILED|Failure" $W/device_reference_test.txt | head -12
timeout 60 .bundle/run tuner_test --gtest_filter='Evaluator*' > $W/tuner_test.txt 2>&1
echo "tuner_test rc=$? $(( $(date +%s) - T0 ))s"; save
for v in host auto; do
  timeout 200 .bundle/run opsched tune --suite $H/decide.txt --records $W/tuned_$v.log --trials 24 --early-stop 8 \
    --time-budget 180 --transfer $L --min-time-ms 5 --no-progress --wide --verify $v > $W/tune_$v.txt 2>&1
  echo "tune $v rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^session' $W/tune_$v.txt)"
  grep -E '^ +[0-9]+  pointwise' $W/tune_$v.txt | awk '{printf "%s:%s/%s/%s ", $1, $(NF-4), $(NF-1), $NF}'; echo
  save
done
echo "done $(( $(date +%s) - T0 ))s"; save
