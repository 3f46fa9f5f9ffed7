#!/usr/bin/env bash
# h46 (H200): the rest of the tuned suites on the H200 (conv, reduce, scatter, pointwise, pointwise_train),
# seeded from the shipped H100 logs and the H200 logs so far; the H200 model fitted on the H100 and H200
# logs (held-out files excluded); a reference tuning of the held-out models file (never shipped or fitted).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h46; R=bench/records/nvidia-h100; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
cp $H/dtypes.log $H/models.log $W/
H100="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
T="--transfer $H100 $W/dtypes.log $W/models.log --model $H/model_h45.opsm --min-time-ms 10 --no-progress --wide"
for s in conv reduce scatter; do
  timeout 150 .bundle/run opsched tune --suite bench/suites/$s.txt --records $W/$s.log --trials 16 --early-stop 8 --time-budget 120 $T > $W/tune_$s.txt 2>&1
  echo "$s rc=$? $(( $(date +%s) - T0 ))s"; save
done
timeout 200 .bundle/run opsched tune --suite bench/suites/pointwise.txt --records $W/pointwise.log --trials 12 --early-stop 6 --time-budget 110 $T > $W/tune_pointwise.txt 2>&1
echo "pointwise rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched tune --suite bench/suites/pointwise_train.txt --records $W/pointwise.log --trials 12 --early-stop 6 --time-budget 70 $T > $W/tune_pointwise_train.txt 2>&1
echo "pointwise_train rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched records train --records $H100 $W/conv.log $W/dtypes.log $W/models.log $W/pointwise.log $W/reduce.log $W/scatter.log \
  --exclude-suite bench/suites/models/heldout.txt bench/suites/pointwise_heldout.txt -o $W/model.opsm > $W/train_model.txt 2>&1
echo "model rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/train_model.txt; save
timeout 120 .bundle/run opsched tune --suite bench/suites/models/heldout.txt --records $W/reference_heldout.log --trials 32 --time-budget 100 \
  --transfer $H100 $W/conv.log $W/dtypes.log $W/models.log $W/reduce.log $W/scatter.log --model $W/model.opsm --min-time-ms 10 --no-progress --wide > $W/tune_reference_heldout.txt 2>&1
echo "reference rc=$? $(( $(date +%s) - T0 ))s"; save
grep -h "candidates measured" $W/tune_*.txt
echo "done $(( $(date +%s) - T0 ))s"
