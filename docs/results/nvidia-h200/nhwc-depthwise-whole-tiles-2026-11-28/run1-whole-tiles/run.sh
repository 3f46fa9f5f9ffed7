#!/usr/bin/env bash
# h57 (H200): nhwc staged depthwise tiles of whole-tile extents (7, 14, 28 of a 56-pixel map). GPU tests, then
# the six 16-bit channels-last layers tuned again (xgb, the nhwc staged kernel alone, seeded by the shipped logs),
# and served from the shipped logs with and without the new records, beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h57; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
export LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run conv2d_test --gtest_filter='*Nhwc*:*Depthwise*:*depthwise*' > $W/gpu-tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^\[  (PASSED|FAILED)|^\[       OK|^\[  FAILED|SKIPPED" $W/gpu-tests.txt | head -30
TEST_SRCDIR=/tmp/rf .bundle/run main_launch_test > $W/main-launch-test.txt 2>&1; echo "main_launch_test rc=$?"; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 300 .bundle/run opsched tune --suite $H/nhwc.txt --records $W/nhwc.log --policy xgb --trials 64 --transfer $L \
  --implementations conv2d_cuda_depthwise_staged_nhwc --min-time-ms 4 --no-progress --wide > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; save
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 100 .bundle/run opsched bench --suite $H/nhwc.txt --records $L $B --baseline /tmp/b1.json --report $W/before > $W/bench_before.txt 2>&1
timeout 100 .bundle/run opsched bench --suite $H/nhwc.txt --records $L $W/nhwc.log $B --baseline /tmp/b2.json --report $W/after > $W/bench_after.txt 2>&1
echo "bench $(( $(date +%s) - T0 ))s"; save
for s in before after; do
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/nhwc.txt --opsched $W/$s/report.json \
   --benchmark both --json $W/compare_$s.json --markdown $W/compare_$s.md > $W/compare_$s.txt 2>&1; echo "compare $s rc=$?")
done
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_*.txt; save
