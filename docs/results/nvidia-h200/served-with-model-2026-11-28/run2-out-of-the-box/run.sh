#!/usr/bin/env bash
# h50 (H200): the held-out models file served out of the box from the shipped H200 logs and the
# shipped H200 model (format 2), then from the logs alone, both with the floor's neighbours' verdict,
# beside PyTorch, against run3's reference tuning; the dispatch micro-benchmark with the H200 model.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h50; R=bench/records/nvidia-h200; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
REF=docs/results/nvidia-h200/tune-from-h100-2026-11-28/run3-rest-and-model/reference_heldout.log
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for mode in model logs; do
  M=""; [ $mode = model ] && M="--model $R/model.opsm"
  timeout 150 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L $M --reference $REF $B \
    --baseline /tmp/b_$mode.json --report $W/heldout_$mode > $W/bench_heldout_$mode.txt 2>&1
  echo "bench $mode rc=$? $(( $(date +%s) - T0 ))s"; save
  (cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout_$mode/report.json \
     --benchmark both --json $W/compare_heldout_$mode.json --markdown $W/compare_heldout_$mode.md > $W/compare_heldout_$mode.txt 2>&1; echo "compare $mode rc=$?")
  echo "$(( $(date +%s) - T0 ))s"; save
done
OPSCHED_BENCH_MODEL=$R/model.opsm timeout 120 .bundle/run dispatch_benchmark --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $W/dispatch_benchmark.txt 2>&1
echo "dispatch rc=$? $(( $(date +%s) - T0 ))s"
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt $W/bench_heldout_*.txt; save
