#!/usr/bin/env bash
# h97 (H200): torch.compile's 8-op chain timed with CUDA events (tc2.py), and opsched's served from the shipped
# logs (opsched bench) in the same session, to set beside h96's Nsight Compute durations (165.8 and 144.7 us).
set -uo pipefail
W=/tmp/res; mkdir -p $W; cp .out/h97/* $W/; R=bench/records/nvidia-h200
[ -x .bundle/run ] || tar xJf .out/h95/bundle.tar.xz -C .
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
python3 $W/tc2.py 2>&1 | tail -2 | tee $W/tc2.txt
grep -hv '^#' bench/suites/pointwise.txt | grep . | grep -E '8-op chain' | sed 's/ *#.*//' > $W/chain8.txt
timeout 60 .bundle/run opsched bench --suite $W/chain8.txt --records $L --rounds 1 --min-time-ms 20 --no-progress --wide \
  --baseline /tmp/c.json --update-baseline > $W/bench_chain8.txt 2>&1
grep -E '^ +1  pointwise' $W/bench_chain8.txt | awk '{print "opsched 8-op chain:", $(NF-10), "us served"}' | tee -a $W/tc2.txt
python3 $W/tc2.py 2>&1 | tail -1 | tee -a $W/tc2.txt
(cd /tmp && tar czf $OUT/results.tar.gz res)
