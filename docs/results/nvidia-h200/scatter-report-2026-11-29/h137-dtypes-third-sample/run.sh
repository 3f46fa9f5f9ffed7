#!/usr/bin/env bash
# h137 (H200): dtypes.txt served from the shipped logs with the session's final build, beside PyTorch: a third sample
# of the file's geomean (h129 1.509x, h131 1.520x).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h137; R=bench/records/nvidia-h200; cp $H/*.sh $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
S=$PWD/bench/suites/dtypes.txt
timeout 100 .bundle/run opsched bench --suite $S --records $L $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 200 python3 compare_torch.py --suite $S --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_dtypes.txt
(cd /tmp && tar czf $OUT/results.tar.gz res)
