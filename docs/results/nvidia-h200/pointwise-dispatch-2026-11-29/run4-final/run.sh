#!/usr/bin/env bash
# h72 (H200): the final build (h71's v3: uniform group loop at 8 and 16 lanes, the fold checked before the dispatch,
# a thread past the last group loads the last group; superinstructions; exp through ex2.approx.ftz). GPU pointwise
# tests; pointwise.txt lines 7, 14, 16 by base (ec87a04) and this build in turn; the held-out pointwise file (never
# tuned) served from the shipped log; both beside PyTorch eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h72; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
for t in pointwise_test pointwise_accumulator_test pointwise_hoist_test pointwise_batchnorm_test; do
  TEST_SRCDIR=/tmp/rf timeout 100 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
done; save
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for b in base opsched; do
  timeout 60 .bundle/run $b bench --suite $H/interp3.txt --records $L $B --baseline /tmp/b$b.json --report $W/i3_$b > $W/bench_i3_$b.txt 2>&1
done
echo "bench i3 $(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched bench --suite bench/suites/pointwise_heldout.txt --records $L --rounds 1 --min-time-ms 5 --no-progress --wide \
  --update-baseline --baseline /tmp/ho.json --report $W/ho > $W/bench_ho.txt 2>&1
echo "heldout $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 90 python3 compare_torch.py --suite ../$H/interp3.txt --opsched $W/i3_opsched/report.json --compile \
   --json $W/compare_i3.json --markdown $W/compare_i3.md > $W/compare_i3.txt 2>&1; echo "compare i3 rc=$? $(( $(date +%s) - T0 ))s")
save
left=$(( 520 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite suites/pointwise_heldout.txt --opsched $W/ho/report.json --compile \
   --json $W/compare_ho.json --markdown $W/compare_ho.md > $W/compare_ho.txt 2>&1; echo "compare ho rc=$? $(( $(date +%s) - T0 ))s")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt; save
