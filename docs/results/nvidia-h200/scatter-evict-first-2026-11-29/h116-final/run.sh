#!/usr/bin/env bash
# h116 (H200): the final code (evict-first loads in the parallel scatter and the copy): scatter_test on the GPU;
# dtypes.txt served from the shipped logs beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h116; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run scatter_test > $W/scatter_test.txt 2>&1
echo "scatter_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/scatter_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $W/scatter_test.txt | head -5; save
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 100 .bundle/run opsched bench --suite $PWD/bench/suites/dtypes.txt --records $L $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 200 python3 compare_torch.py --suite $PWD/suites/dtypes.txt --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes.txt
echo "done $(( $(date +%s) - T0 ))s"; save
