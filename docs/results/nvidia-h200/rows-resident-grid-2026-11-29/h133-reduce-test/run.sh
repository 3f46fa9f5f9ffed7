#!/usr/bin/env bash
# h133 (H200): reduce_test on the GPU after the rows kernel's resident grid (RowsOnAResidentGridTakeItemsGridStride
# and the random configs of every test, which now draw `resident` too).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h133; cp $H/*.sh $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 400 .bundle/run reduce_test > $W/reduce_test.txt 2>&1
echo "reduce_test rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|Resident" $W/reduce_test.txt | head
(cd /tmp && tar czf $OUT/results.tar.gz res)
