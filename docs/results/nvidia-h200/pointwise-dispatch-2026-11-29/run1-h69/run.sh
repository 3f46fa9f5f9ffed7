#!/usr/bin/env bash
# h69 (H200): interpreter dispatch (uniform group loop without convergence barriers, the fold flag in the key: one
# range check, byte-offset instruction loop), superinstructions (-abs, mul-add), exp through ex2.approx.ftz.
# Builds: base (ec87a04 = h68's opsched), opsched (all of it), noftz (all but the ftz exp). GPU pointwise tests;
# pointwise.txt lines 7, 14, 16 and five held-out chains served from the shipped log by each build, in turn;
# Nsight Compute of line 14 (new build).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h69; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
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
  for b in base opsched noftz; do
    timeout 60 .bundle/run $b bench --suite $H/interp3.txt --records $L $B --baseline /tmp/b$b.json --report $W/i3_$b$round > $W/bench_i3_$b$round.txt 2>&1
  done
  echo "bench i3 round $round $(( $(date +%s) - T0 ))s"; save
done
Q="--rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq"
timeout 100 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SourceCounters -o /tmp/rep_new -f \
  .bundle/run opsched bench --suite $H/line14.txt --records $L $Q > $W/ncu_new.log 2>&1
ncu -i /tmp/rep_new.ncu-rep --page details > $W/ncu_details_new.txt 2>&1
ncu -i /tmp/rep_new.ncu-rep --page source --csv --print-source sass > $W/ncu_source_new.csv 2>&1
echo "ncu $(( $(date +%s) - T0 ))s"; save
for round in 1 2; do
  for b in base opsched noftz; do
    [ $round = 2 ] && [ $b = noftz ] && continue
    timeout 60 .bundle/run $b bench --suite $H/heldout5.txt --records $L $B --baseline /tmp/h$b.json --report $W/h5_$b$round > $W/bench_h5_$b$round.txt 2>&1
  done
  echo "bench h5 round $round $(( $(date +%s) - T0 ))s"; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
