#!/usr/bin/env bash
# h67 (H200): three builds of the interpreter: old (h63's, before spread lanes), spread (6ba3bd1), pf (spread plus
# each instruction's head and immediate read one instruction ahead). Tests of pf; pointwise.txt lines 7, 14, 16 served
# from the shipped log by each, twice in turn; Nsight Compute (with stall sampling) of line 14 for spread and pf;
# pointwise_heldout.txt once each (one round); torch.compile beside the held-out file (pf's report).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h67; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 120 .bundle/run pointwise_test_pf > $W/pointwise_test_pf.txt 2>&1; echo "pointwise_test_pf rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/pointwise_test_pf.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for round in 1 2; do
  for b in old spread pf; do
    timeout 60 .bundle/run opsched_$b bench --suite $H/interp3.txt --records $L $B --baseline /tmp/b$b.json --report $W/i3_$b$round > $W/bench_i3_$b$round.txt 2>&1
  done
done
echo "bench i3 $(( $(date +%s) - T0 ))s"; save
Q="--rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq"
for b in spread pf; do
  timeout 100 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SourceCounters -o /tmp/rep_$b -f \
    .bundle/run opsched_$b bench --suite $H/line14.txt --records $L $Q > $W/ncu_$b.log 2>&1
  ncu -i /tmp/rep_$b.ncu-rep --page details > $W/ncu_details_$b.txt 2>&1
  ncu -i /tmp/rep_$b.ncu-rep --page source --csv --print-source sass > $W/ncu_source_$b.csv 2>&1
  echo "ncu $b $(( $(date +%s) - T0 ))s"
done; save
B1="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
for b in old spread pf; do
  timeout 150 .bundle/run opsched_$b bench --suite bench/suites/pointwise_heldout.txt --records $L $B1 --baseline /tmp/h$b.json --report $W/ho_$b > $W/bench_ho_$b.txt 2>&1
  echo "heldout $b $(( $(date +%s) - T0 ))s"; save
done
(cd bench && timeout 200 python3 compare_torch.py --suite ../bench/suites/pointwise_heldout.txt --opsched $W/ho_pf/report.json --compile \
   --json $W/compare_ho.json --markdown $W/compare_ho.md > $W/compare_ho.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt; save
