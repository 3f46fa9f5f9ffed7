#!/usr/bin/env bash
# h78 (H200): the shared-slot interpreter kernels' register bound (r: 48 registers at 16 lanes, 40 at 8;
# ptxas took 64 and 52-56) and the bytecode's evaluation order by Need (su: the operand needing more slots
# first; the 8-op chain 3 -> 2 spill slots), alone and together (su_r), against base (c5c4618).
# Decided on decide.txt (pointwise.txt and pointwise_train.txt lines), checked on validate.txt (held-out).
# Part a: the pointwise GPU tests of the su_r tree, then round 1; part b: round 2 and ncu on the 8-op chain.
set -uo pipefail
BINS="${BINS:-base r su su_r}"; T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h78; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -d .bundle ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/pointwise.log"
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
round() { for s in decide validate; do for b in $BINS; do
  timeout 100 .bundle/run $b bench --suite $H/$s.txt --records $L $B --baseline /tmp/$b$s$1.json --report $W/${s}_${b}_$1 > $W/bench_${s}_${b}_$1.txt 2>&1
  echo "$s $b $1 rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^ *[0-9]+  pointwise' $W/bench_${s}_${b}_$1.txt | awk '{printf "%s ", $(NF-10)}')"
done; save; done; }
if [ "$1" = a ]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
  mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
  for t in pointwise_test pointwise_batchnorm_test pointwise_hoist_test pointwise_accumulator_test; do
    TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run $t > $W/$t.txt 2>&1
    echo "$t rc=$? $(grep -cE '^\[       OK' $W/$t.txt) ok, $(grep -cE '^\[  SKIPPED' $W/$t.txt) skipped, $(grep -cE '^\[  FAILED' $W/$t.txt) failed $(( $(date +%s) - T0 ))s"
  done; save
  round 1
else
  round 2
  sed -n 2p $H/decide.txt > /tmp/chain8.txt
  for b in $BINS; do
    timeout 60 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section LaunchStats --section Occupancy \
      --section SpeedOfLight .bundle/run $b bench --suite /tmp/chain8.txt --records $L --rounds 1 --min-time-ms 1 --no-progress \
      --update-baseline --baseline /tmp/nc$b.json > $W/ncu_$b.txt 2>&1
    echo "$b: $(grep -E 'Registers Per Thread|Achieved Occupancy|Duration|Block Limit Shared' $W/ncu_$b.txt | awk '{print $NF}' | tr '\n' ' ')"
  done
fi
echo "done $(( $(date +%s) - T0 ))s"; save
