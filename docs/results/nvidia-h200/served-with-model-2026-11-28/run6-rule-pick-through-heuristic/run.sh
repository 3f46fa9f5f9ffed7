#!/usr/bin/env bash
# h56 (H200, RuleCandidate live through Heuristic): what the shipped H200 logs and model decide for four held-out lines (explain), and the
# held-out models file served out of the box once more (a second sample of run2's figures).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h56; R=bench/records/nvidia-h200; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
REF=docs/results/nvidia-h200/tune-from-h100-2026-11-28/run3-rest-and-model/reference_heldout.log
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
for n in 9 15 17 24 30 38; do
  line=$(sed -n ${n}p bench/suites/models/heldout.txt | sed 's/ *#.*//')
  echo "=== line $n" >> $W/explain.txt
  .bundle/run opsched explain "$line" --records $L --model $R/model.opsm >> $W/explain.txt 2>&1
done
echo "explain $(( $(date +%s) - T0 ))s"; save
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 150 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --model $R/model.opsm --reference $REF $B \
  --baseline /tmp/b.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_heldout.txt $W/bench_heldout.txt; save
