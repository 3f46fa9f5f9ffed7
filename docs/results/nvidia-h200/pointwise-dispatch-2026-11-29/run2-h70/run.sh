#!/usr/bin/env bash
# h70 (H200): as h69, with the uniform loop and the fold in the dispatch's range check at 8 and 16 lanes only, and the
# group index kept in a register (h69's loads read the thread index again: S2R). Builds: base (ec87a04) and opsched.
# GPU pointwise tests; pointwise.txt lines 7, 14, 16 and five held-out chains, each build in turn, twice.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h70; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
for t in pointwise_test pointwise_accumulator_test pointwise_hoist_test pointwise_batchnorm_test; do
  TEST_SRCDIR=/tmp/rf timeout 150 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
done; save
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for round in 1 2; do
  for b in base opsched; do
    timeout 60 .bundle/run $b bench --suite $H/interp3.txt --records $L $B --baseline /tmp/b$b.json --report $W/i3_$b$round > $W/bench_i3_$b$round.txt 2>&1
  done
  echo "bench i3 round $round $(( $(date +%s) - T0 ))s"; save
done
for round in 1 2; do
  for b in base opsched; do
    timeout 60 .bundle/run $b bench --suite $H/heldout5.txt --records $L $B --baseline /tmp/h$b.json --report $W/h5_$b$round > $W/bench_h5_$b$round.txt 2>&1
  done
  echo "bench h5 round $round $(( $(date +%s) - T0 ))s"; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
