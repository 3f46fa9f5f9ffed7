#!/usr/bin/env bash
# h112 (H200): grouped 3x3 convolutions, several filters a thread (conv2d_cuda_grouped.cu, direct, up to 32 outputs). conv2d_test on
# the GPU; the 4 grouped train lines (models/train.txt) and dtypes.txt line 39 tuned over the own depthwise
# kernel's whole space (grid), the 4 train lines over every implementation (xgb, 48 trials); served beside
# PyTorch with the 4 grouped held-out lines (never tuned), with and without the model; dtypes.txt in full; the
# held-out models file (never tuned) from the shipped logs, these records and the shipped model.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h112; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 240 .bundle/run conv2d_test > $W/conv2d_test.txt 2>&1
echo "conv2d_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/conv2d_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure|grouped configs" $W/conv2d_test.txt | head -8; save
timeout 150 .bundle/run opsched tune --suite $W/grouped_train.txt --records $W/grouped_grid.log --policy grid --trials 200 \
  --implementations conv2d_cuda_depthwise --no-progress --wide > $W/tune_grid.txt 2>&1
echo "tune grid rc=$? $(( $(date +%s) - T0 ))s"; grep -i "tuned\|summary\|session" $W/tune_grid.txt | tail -4; save
head -4 $W/grouped_train.txt > $W/grouped_models_train.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 150 .bundle/run opsched tune --suite $W/grouped_models_train.txt --records $W/grouped_all.log --trials 48 \
  --transfer $L $W/grouped_grid.log --no-progress --wide > $W/tune_all.txt 2>&1
echo "tune all rc=$? $(( $(date +%s) - T0 ))s"; tail -3 $W/tune_all.txt; save
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
N="$L $W/grouped_grid.log $W/grouped_all.log"
cat $W/grouped_train.txt $W/grouped_heldout.txt > $W/grouped.txt
for s in grouped:$W/grouped.txt:"$N" grouped_model:$W/grouped.txt:"$N --model $R/model.opsm" \
         dtypes:$PWD/bench/suites/dtypes.txt:"$N" heldout:$PWD/bench/suites/models/heldout.txt:"$N --model $R/model.opsm"; do
  IFS=: read -r n f logs <<< "$s"
  timeout 100 .bundle/run opsched bench --suite $f --records $logs $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 590 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $f --opsched $W/$n/report.json \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
