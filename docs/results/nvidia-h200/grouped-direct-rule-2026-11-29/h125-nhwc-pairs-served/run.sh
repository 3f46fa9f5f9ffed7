#!/usr/bin/env bash
# h125 (H200): two channels a lane in the channels-last staged depthwise kernel. conv2d_test's depthwise tests on the
# GPU (every staged nhwc config test against the float64 reference); the four 16-bit channels-last 3x3 lines
# (dtypes.txt 37, train.txt 64-66) retuned over that implementation (64 xgb trials, seeded with the shipped records'
# configs); dtypes.txt served from the shipped logs and those records, beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h125; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 240 .bundle/run conv2d_test --gtest_filter='*Nhwc*:*Depthwise*:*depthwise*' > $W/conv2d_test.txt 2>&1
echo "conv2d_test rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]" $W/conv2d_test.txt | head; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 150 .bundle/run opsched tune --suite $W/nhwc16.txt --records $W/nhwc_new.log --trials 64 --transfer $L \
  --implementations conv2d_cuda_depthwise_staged_nhwc --no-progress --wide > $W/tune_nhwc.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; grep -A5 "^line" $W/tune_nhwc.txt | cut -c1-40,100-260; save
S=$PWD/bench/suites/dtypes.txt
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 120 .bundle/run opsched bench --suite $S --records $L $W/nhwc_new.log $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 250 python3 compare_torch.py --suite $S --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes.txt; grep "^ *37 " $W/compare_dtypes.txt
echo "done $(( $(date +%s) - T0 ))s"; save
