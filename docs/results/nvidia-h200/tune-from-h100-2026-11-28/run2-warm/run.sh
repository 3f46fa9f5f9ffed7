#!/usr/bin/env bash
# h45 (H200): tune dtypes.txt and models/train.txt again with the build whose seeds include the
# choices of another device of the arch (the shipped H100 logs and model), same settings as the
# cold run (h44); merge both runs into H200 logs; fit a model on the H100 and H200 logs (the
# held-out file excluded); bench the held-out models file (never tuned) with it beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h45; R=bench/records/nvidia-h100; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
H100="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
T="--transfer $H100 --model $R/model.opsm --min-time-ms 10 --no-progress --wide"
timeout 200 .bundle/run opsched tune --suite bench/suites/dtypes.txt --records $W/warm_dtypes.log --trials 16 --early-stop 8 --time-budget 170 $T > $W/tune_dtypes.txt 2>&1
echo "dtypes rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 330 .bundle/run opsched tune --suite bench/suites/models/train.txt --records $W/warm_models.log --trials 16 --early-stop 8 --time-budget 300 $T > $W/tune_train.txt 2>&1
echo "train rc=$? $(( $(date +%s) - T0 ))s"; save
.bundle/run opsched records merge $H/cold_dtypes.log $W/warm_dtypes.log -o $W/dtypes.log > $W/merge.txt 2>&1
.bundle/run opsched records merge $H/cold_models.log $W/warm_models.log -o $W/models.log >> $W/merge.txt 2>&1
echo "merge rc=$? $(( $(date +%s) - T0 ))s"; cat $W/merge.txt | tail -4
timeout 150 .bundle/run opsched records train --records $H100 $W/dtypes.log $W/models.log --exclude-suite bench/suites/models/heldout.txt -o $W/model.opsm > $W/train_model.txt 2>&1
echo "model rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/train_model.txt; save
timeout 120 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $W/dtypes.log $W/models.log --model $W/model.opsm \
  --rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline --baseline /tmp/b.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; tail -12 $W/compare_heldout.txt; save
