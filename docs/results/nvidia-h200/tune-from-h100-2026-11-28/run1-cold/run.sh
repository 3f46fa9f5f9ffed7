#!/usr/bin/env bash
# h44 (H200): tune H200 records for dtypes.txt and models/train.txt, the H100 records' choice measured
# first (--transfer the shipped logs, --model the shipped model), 16 trials a workload.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h44; R=bench/records/nvidia-h100; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
T="--transfer $R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log --model $R/model.opsm --min-time-ms 10 --no-progress --wide"
timeout 200 .bundle/run opsched tune --suite bench/suites/dtypes.txt --records $W/dtypes.log --trials 16 --early-stop 8 --time-budget 170 $T > $W/tune_dtypes.txt 2>&1
echo "dtypes rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 330 .bundle/run opsched tune --suite bench/suites/models/train.txt --records $W/models.log --trials 16 --early-stop 8 --time-budget 300 $T > $W/tune_train.txt 2>&1
echo "train rc=$? $(( $(date +%s) - T0 ))s"; save
tail -3 $W/tune_dtypes.txt $W/tune_train.txt
