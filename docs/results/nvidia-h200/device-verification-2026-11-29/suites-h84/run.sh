#!/usr/bin/env bash
# h84 (H200): with the shipped H200 logs (pointwise.log as merged in e12f46a): a: the 8-op chain tuned
# exhaustively (grid policy, every legal candidate, checked on the device) into a fresh log: is the
# shipped choice the best of the space? Then the tuned suites pointwise.txt and pointwise_train.txt
# (29 lines) benched from the shipped logs; b: that report beside PyTorch eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h84; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
sed -n 14p bench/suites/pointwise.txt > $W/chain8.txt
timeout 200 .bundle/run opsched tune --suite $W/chain8.txt --records $W/grid.log --policy grid --trials 2000 \
  --min-time-ms 5 --no-progress --wide > $W/tune_grid.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^session' $W/tune_grid.txt)"
grep -E '^ +[0-9]+  pointwise' $W/tune_grid.txt | awk '{print $(NF-6), $(NF-4), $(NF-1), $NF}'
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
timeout 120 .bundle/run opsched bench --suite $W/tuned.txt --records $L $B --baseline /tmp/t.json --report $W/tuned > $W/bench_tuned.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s: $(grep -E 'geomean' $W/bench_tuned.txt)"; save
left=$(( 560 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite $W/tuned.txt --opsched $W/tuned/report.json --compile \
   --json $W/compare_tuned.json --markdown $W/compare_tuned.md > $W/compare_tuned.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_tuned.txt
echo "done $(( $(date +%s) - T0 ))s"; save
