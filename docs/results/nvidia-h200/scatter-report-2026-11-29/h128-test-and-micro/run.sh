#!/usr/bin/env bash
# h128 (H200): the scatter's bad-index report by the thread that records the smallest position (no per-block count).
# scatter_test on the GPU; the line-7 microbenchmark (new production beside the old report); dtypes.txt's scatter
# lines retuned in h129.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h128; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $H/*.py $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 280 .bundle/run scatter_test > $W/scatter_test.txt 2>&1
echo "scatter_test rc=$? $(( $(date +%s) - T0 ))s"; grep -E "^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]" $W/scatter_test.txt | head; save
xz -dc $H/scatter7.xz > /tmp/scatter7 && chmod +x /tmp/scatter7 && timeout 60 /tmp/scatter7 > $W/scatter7.txt 2>&1
echo "micro rc=$? $(( $(date +%s) - T0 ))s"; grep "production (new report) copy_block=256 block=512\|alone: production\|alone: torch-like 1" $W/scatter7.txt
timeout 40 python3 $H/torch7.py > $W/torch7.txt 2>&1; cat $W/torch7.txt; save
echo "done $(( $(date +%s) - T0 ))s"; save
