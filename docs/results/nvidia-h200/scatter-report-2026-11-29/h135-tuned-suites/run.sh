#!/usr/bin/env bash
# h135 (H200): the tuned scatter and reduce suites (bench/suites/scatter.txt, reduce.txt) served from the shipped logs
# with the final build of the forty-fourth session (2f0587e's code: the new bad-index report), beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h135; R=bench/records/nvidia-h200; cp $H/*.sh $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for s in scatter reduce; do
  S=$PWD/bench/suites/$s.txt
  timeout 120 .bundle/run opsched bench --suite $S --records $L $B --baseline /tmp/$s.json --report $W/$s > $W/bench_$s.txt 2>&1
  echo "bench $s rc=$? $(( $(date +%s) - T0 ))s"; save
  (cd bench && timeout 200 python3 compare_torch.py --suite $S --opsched $W/$s/report.json \
     --json $W/compare_$s.json --markdown $W/compare_$s.md > $W/compare_$s.txt 2>&1; echo "compare $s rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup" $W/compare_$s.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
