#!/usr/bin/env bash
# h49 (H200): two GNN scatter-add train lines whose feature tables are beyond L2 (Flickr, Reddit), tuned
# from the H100 and H200 logs; the H200 model fitted (format 2, trees alone) on the H100 and H200 logs
# with them (held-out files excluded); the held-out models file served from the H200 logs and that model,
# beside PyTorch, against run3's reference tuning.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h49; R=bench/records/nvidia-h200; P=bench/records/nvidia-h100; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
REF=docs/results/nvidia-h200/tune-from-h100-2026-11-28/run3-rest-and-model/reference_heldout.log
cp $R/models.log $W/models.log
H100="$P/conv.log $P/dtypes.log $P/models.log $P/pointwise.log $P/reduce.log $P/scatter.log"
timeout 200 .bundle/run opsched tune --suite $H/new_lines.txt --records $W/models.log --trials 40 --time-budget 90 \
  --transfer $H100 $R/conv.log $R/dtypes.log $R/reduce.log $R/scatter.log --model $H/model_before.opsm --min-time-ms 10 --no-progress --wide > $W/tune_new.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -4 $W/tune_new.txt; save
L="$R/conv.log $R/dtypes.log $W/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 100 .bundle/run opsched records train --records $H100 $L \
  --exclude-suite bench/suites/models/heldout.txt bench/suites/pointwise_heldout.txt -o $W/model.opsm > $W/train_model.txt 2>&1
echo "model rc=$? $(( $(date +%s) - T0 ))s"; cat $W/train_model.txt; ls -la $W/model.opsm; save
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 150 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --model $W/model.opsm --reference $REF $B \
  --baseline /tmp/b1.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench heldout rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare heldout rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt $W/bench_heldout.txt; save
