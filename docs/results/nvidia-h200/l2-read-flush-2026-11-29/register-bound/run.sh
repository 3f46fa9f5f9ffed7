#!/usr/bin/env bash
# h77 (H200): registers a thread of the interpreter's private-slot kernels may keep. ncu (h76) found them at 64
# registers, 50% occupancy, issue slots 58-70% busy and DRAM 45-63%: latency-bound. base: ptxas's choice (64);
# r48 and r40: __launch_bounds__ asking for blocks enough to keep 48 or 40 (62.5% or 75% occupancy).
# Decided on decide.txt (pointwise.txt lines 7, 14, 15, 16, 19 and five pointwise_train.txt lines), checked on
# validate.txt (five held-out chains, never tuned). Each binary in turn, twice; read flush.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h77; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/pointwise.log"
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
for k in 1 2; do for s in decide validate; do for b in base r48 r40; do
  timeout 90 .bundle/run $b bench --suite $H/$s.txt --records $L $B --baseline /tmp/$b$s$k.json --report $W/${s}_${b}_$k > $W/bench_${s}_${b}_$k.txt 2>&1
  echo "$s $b $k rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^ *[0-9]+  pointwise' $W/bench_${s}_${b}_$k.txt | awk '{printf "%s ", $(NF-10)}')"
done; save; done; done
sed -n 2p $H/decide.txt > /tmp/chain8.txt
for b in base r48 r40; do
  timeout 60 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section LaunchStats --section Occupancy \
    --section SpeedOfLight .bundle/run $b bench --suite /tmp/chain8.txt --records $L --rounds 1 --min-time-ms 1 --no-progress \
    --update-baseline --baseline /tmp/nc$b.json > $W/ncu_$b.txt 2>&1
  echo "$b: $(grep -E 'Registers Per Thread|Achieved Occupancy|Duration' $W/ncu_$b.txt | awk '{print $NF}' | tr '\n' ' ')"
done
echo "done $(( $(date +%s) - T0 ))s"; save
