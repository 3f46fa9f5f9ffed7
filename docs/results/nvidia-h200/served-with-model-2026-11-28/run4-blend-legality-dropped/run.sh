#!/usr/bin/env bash
# h52 (H200): "no evidence from a neighbour where a candidate cannot run" in the model's blend, judged where
# cuDNN's spaces can be computed: the k-fold holdout studies (H100+H200 logs, each alone) with the base
# build and the patched one, on this host; the held-out models file served with the patched build.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h52; R=bench/records/nvidia-h200; P=bench/records/nvidia-h100; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
BOTH="$P/conv.log $P/dtypes.log $P/models.log $P/reduce.log $P/scatter.log $R/conv.log $R/dtypes.log $R/models.log $R/reduce.log $R/scatter.log"
for b in opsched opsched_legal; do
  timeout 150 .bundle/run $b study --holdout --records $BOTH > $W/kfold_both_$b.txt 2>&1 &
  timeout 150 .bundle/run $b study --holdout --records $P/conv.log $P/dtypes.log $P/models.log $P/reduce.log $P/scatter.log > $W/kfold_h100_$b.txt 2>&1 &
  timeout 150 .bundle/run $b study --holdout --records $R/conv.log $R/dtypes.log $R/models.log $R/reduce.log $R/scatter.log > $W/kfold_h200_$b.txt 2>&1 &
  REF=docs/results/nvidia-h200/tune-from-h100-2026-11-28/run3-rest-and-model/reference_heldout.log
  timeout 150 .bundle/run $b study --holdout --records $R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $REF --model $R/model.opsm > $W/shipped_h200_$b.txt 2>&1 &
  timeout 150 .bundle/run $b study --holdout --records $P/conv.log $P/reduce.log $P/scatter.log $P/models.log $P/dtypes.log bench/reference/nvidia-h100/heldout.log --model $P/model.opsm > $W/shipped_h100_$b.txt 2>&1 &
done
wait
echo "studies $(( $(date +%s) - T0 ))s"; tail -qn1 $W/kfold_*.txt $W/shipped_*.txt; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 150 .bundle/run opsched_legal bench --suite bench/suites/models/heldout.txt --records $L --model $R/model.opsm --reference $REF $B \
  --baseline /tmp/b.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/bench_heldout.txt; save
