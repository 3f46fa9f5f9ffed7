#!/usr/bin/env bash
# h66 (H200): the interpreter's lanes spread over the warp's span (SpreadChunk). GPU pointwise tests; pointwise.txt
# and pointwise_heldout.txt served from the shipped H200 log by the previous build (h63's) and this one, twice in
# turn; this build beside eager PyTorch and torch.compile; Nsight Compute of the 8-op chain (line 14), both builds.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h66; R=bench/records/nvidia-h200; cp $H/*.sh $W/
mkdir -p /tmp/old && tar xJf .out/h63/bundle.tar.xz -C /tmp/old
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
for t in pointwise_test pointwise_hoist_test pointwise_batchnorm_test pointwise_accumulator_test; do
  TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ')"
done; save
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for s in pointwise pointwise_heldout; do
  for round in 1 2; do
    timeout 100 /tmp/old/.bundle/run opsched bench --suite bench/suites/$s.txt --records $L $B --baseline /tmp/b0$s.json --report $W/old_$s$round > $W/bench_old_$s$round.txt 2>&1
    timeout 100 .bundle/run opsched bench --suite bench/suites/$s.txt --records $L $B --baseline /tmp/b1$s.json --report $W/new_$s$round > $W/bench_new_$s$round.txt 2>&1
  done
  echo "bench $s $(( $(date +%s) - T0 ))s"; save
done
sed -n 14p bench/suites/pointwise.txt > /tmp/line14.txt
Q="--rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq"
for b in old new; do
  run=.bundle/run; [ $b = old ] && run=/tmp/old/.bundle/run
  timeout 120 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SourceCounters -o /tmp/rep_$b -f \
    $run opsched bench --suite /tmp/line14.txt --records $L $Q > $W/ncu_$b.log 2>&1
  ncu -i /tmp/rep_$b.ncu-rep --page details > $W/ncu_details_$b.txt 2>&1
  echo "ncu $b $(( $(date +%s) - T0 ))s"
done; save
for s in pointwise pointwise_heldout; do
  (cd bench && timeout 240 python3 compare_torch.py --suite ../bench/suites/$s.txt --opsched $W/new_$s"2"/report.json --compile \
     --json $W/compare_$s.json --markdown $W/compare_$s.md > $W/compare_$s.txt 2>&1; echo "compare $s rc=$? $(( $(date +%s) - T0 ))s")
  save
done
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt; save
