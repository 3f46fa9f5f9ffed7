#!/usr/bin/env bash
# h111 (H200): the grouped tile kernel with its staging loads batched (8 in flight a lane, loads before stores).
# The grouped GPU tests; the grouped train lines and dtypes.txt line 39 over the own depthwise kernel's space (grid).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h111; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 120 .bundle/run conv2d_test --gtest_filter='*Grouped*:*Depthwise*' > $W/conv2d_test.txt 2>&1
echo "conv2d_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/conv2d_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure|grouped configs" $W/conv2d_test.txt | head -8; save
timeout 150 .bundle/run opsched tune --suite $W/grouped_train.txt --records $W/grouped_grid.log --policy grid --trials 200 \
  --implementations conv2d_cuda_depthwise --no-progress --wide > $W/tune_grid.txt 2>&1
echo "tune grid rc=$? $(( $(date +%s) - T0 ))s"; save
