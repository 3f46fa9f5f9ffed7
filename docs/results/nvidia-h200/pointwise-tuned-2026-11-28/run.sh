#!/usr/bin/env bash
# h54 (H200, final code): the tuned pointwise suite served from the shipped H200 logs beside PyTorch eager
# and torch.compile (issue 20's figures on this GPU).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h54; R=bench/records/nvidia-h200; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 150 .bundle/run opsched bench --suite bench/suites/pointwise.txt --records $L $B --baseline /tmp/b.json --report $W/pw > $W/bench_pointwise.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 400 python3 compare_torch.py --suite ../bench/suites/pointwise.txt --opsched $W/pw/report.json --compile \
   --json $W/compare_pointwise.json --markdown $W/compare_pointwise.md > $W/compare_pointwise.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare_pointwise.txt; save
