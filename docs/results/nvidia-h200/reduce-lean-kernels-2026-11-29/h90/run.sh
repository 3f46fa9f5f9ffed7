#!/usr/bin/env bash
# h90 (H200): the combining kernel of split reductions launched dependent (PDL) after the lean kernels.
# reduce_test on the GPU; then, from the shipped H200 logs (with h89's records merged): the reduce lines of
# dtypes.txt and reduce.txt (31, reduce_all.txt), all of dtypes.txt, and the held-out models file (never
# tuned; the shipped logs and model) benched, each beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h90; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 100 .bundle/run reduce_test > $W/reduce_test.txt 2>&1
echo "reduce_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/reduce_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $W/reduce_test.txt | head -5; save
for s in reduce_all:$W/reduce_all.txt dtypes:bench/suites/dtypes.txt; do
  n=${s%%:*}; f=${s#*:}
  timeout 100 .bundle/run opsched bench --suite $f --records $L $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  (cd bench && timeout 150 python3 compare_torch.py --suite $f --opsched $W/$n/report.json \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
timeout 100 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --model $R/model.opsm $B \
  --baseline /tmp/h.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench heldout rc=$? $(( $(date +%s) - T0 ))s"
left=$(( 580 - ($(date +%s) - T0) ))
(cd bench && timeout $left python3 compare_torch.py --suite suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare heldout rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean" $W/compare_heldout.txt
echo "done $(( $(date +%s) - T0 ))s"; save
