#!/usr/bin/env bash
# h118 (H200): a reference tuning of the 4 grouped held-out lines (48 xgb trials of every implementation, into a
# log kept apart: never shipped, never fitted on), then those lines served as shipped (the shipped logs and model)
# with the reference as the best-known column: served/best.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h118; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 200 .bundle/run opsched_final tune --suite $W/grouped_heldout.txt --records $W/reference.log --trials 48 \
  --transfer $L --no-progress --wide > $W/tune_reference.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -8 $W/tune_reference.txt; save
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for m in model:"--model $R/model.opsm" logs:""; do
  n=${m%%:*}; extra=${m#*:}
  timeout 100 .bundle/run opsched_final bench --suite $W/grouped_heldout.txt --records $L $extra --reference $W/reference.log $B \
    --baseline /tmp/$n.json --report $W/served_$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"; tail -6 $W/bench_$n.txt
done
echo "done $(( $(date +%s) - T0 ))s"; save
