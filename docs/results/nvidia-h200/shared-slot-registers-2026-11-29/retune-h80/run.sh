#!/usr/bin/env bash
# h80 (H200): with the shared-slot kernels at 48/40 registers and the Need order (72b1416), decide.txt's ten
# tuned lines (pointwise.txt and pointwise_train.txt) tuned afresh into a new log (16 trials, the shipped logs
# as transfer seeds, measured anew), then decide.txt and the held-out validate.txt served from the shipped log
# and from the shipped log plus the new one, in turn.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h80; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 260 .bundle/run opsched tune --suite $H/decide.txt --records $W/retuned.log --trials 16 --early-stop 8 --time-budget 230 \
  --transfer $L --min-time-ms 5 --no-progress --wide > $W/tune_decide.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s: $(tail -2 $W/tune_decide.txt | head -1)"; save
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
for s in decide validate; do for v in shipped retuned; do
  logs="$R/pointwise.log"; [ $v = retuned ] && logs="$R/pointwise.log $W/retuned.log"
  timeout 100 .bundle/run opsched bench --suite $H/$s.txt --records $logs $B --baseline /tmp/$v$s.json --report $W/${s}_$v > $W/bench_${s}_$v.txt 2>&1
  echo "$s $v rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^ *[0-9]+  pointwise' $W/bench_${s}_$v.txt | awk '{printf "%s ", $(NF-10)}')"
done; save; done
echo "done $(( $(date +%s) - T0 ))s"; save
