#!/usr/bin/env bash
# h71 (H200): which part of the new dispatch costs the memory-bound held-out chains 1-2% (h70). Builds: base
# (ec87a04), v1 (h70's: uniform loop, fold in the dispatch's range check, loads skipped past the last group),
# v2 (as v1, a thread past the last group loads the last group: no branch in the load), v3 (as v2, the fold
# checked before the dispatch). The 8-op chain and five held-out chains, each build in turn, twice.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h71; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for round in 1 2; do
  for b in base v1 v2 v3; do
    timeout 70 .bundle/run $b bench --suite $H/six.txt --records $L $B --baseline /tmp/b$b.json --report $W/s6_$b$round > $W/bench_s6_$b$round.txt 2>&1
  done
  echo "bench round $round $(( $(date +%s) - T0 ))s"; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
