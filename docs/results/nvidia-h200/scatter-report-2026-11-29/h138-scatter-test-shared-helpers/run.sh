#!/usr/bin/env bash
# h138 (H200): scatter_test on the GPU after the report helpers were shared (RecordBad says whether it recorded the smallest; WriteBadPosition).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h138; cp $H/*.sh $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 280 .bundle/run scatter_test > $W/scatter_test.txt 2>&1
echo "scatter_test rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|BadInd" $W/scatter_test.txt | head
(cd /tmp && tar czf $OUT/results.tar.gz res)
