#!/usr/bin/env bash
# h63 (H200, final code of the thirty-fourth session): GPU tests of what changed (pointwise, the channels-last depthwise
# kernel), then the held-out models file and dtypes.txt served out of the box from the shipped H200 logs and model,
# beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h63; R=bench/records/nvidia-h200; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run pointwise_test > $W/pointwise_test.txt 2>&1; echo "pointwise_test rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/pointwise_test.txt | tr '\n' ' ')"
TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run conv2d_test --gtest_filter='*Nhwc*:*Depthwise*:*depthwise*' > $W/conv2d_test.txt 2>&1; echo "conv2d_test rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/conv2d_test.txt | tr '\n' ' ')"
save
REF=docs/results/nvidia-h200/tune-from-h100-2026-11-28/run3-rest-and-model/reference_heldout.log
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 150 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --model $R/model.opsm --reference $REF $B \
  --baseline /tmp/b.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench heldout rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $L --model $R/model.opsm $B \
  --baseline /tmp/b2.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench dtypes rc=$? $(( $(date +%s) - T0 ))s"; save
for s in heldout dtypes; do
  suite=bench/suites/models/heldout.txt; [ $s = dtypes ] && suite=bench/suites/dtypes.txt
  (cd bench && timeout 150 python3 compare_torch.py --suite ../$suite --opsched $W/$s/report.json \
     --benchmark both --json $W/compare_$s.json --markdown $W/compare_$s.md > $W/compare_$s.txt 2>&1; echo "compare $s rc=$?")
done
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt $W/bench_heldout.txt; save
