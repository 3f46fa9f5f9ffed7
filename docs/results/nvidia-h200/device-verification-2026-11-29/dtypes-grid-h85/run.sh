#!/usr/bin/env bash
# h85 (H200): the three dtypes.txt lines furthest from issue 15's targets (22: bf16 row sum, 24: f16
# column sum, both under 80% of copy; 37: the bf16 channels-last depthwise 3x3, under 1.2x PyTorch): every
# legal candidate (grid policy, checked on the device) into a fresh log; then the three served from the
# shipped logs and from the shipped logs plus the grid log, and the latter beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h85; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
sed -n '22p;24p;37p' bench/suites/dtypes.txt > $W/three.txt
timeout 330 .bundle/run opsched tune --suite $W/three.txt --records $W/grid.log --policy grid --trials 5000 \
  --time-budget 300 --min-time-ms 5 --no-progress --wide > $W/tune_grid.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^session' $W/tune_grid.txt)"
grep -E '^ +[0-9]+  (reduce|conv2d)' $W/tune_grid.txt | awk '{print $1, $(NF-6), $(NF-5), $(NF-4), $(NF-1), $NF}'; save
for v in shipped grid; do
  logs="$L"; [ $v = grid ] && logs="$L $W/grid.log"
  timeout 60 .bundle/run opsched bench --suite $W/three.txt --records $logs $B --baseline /tmp/$v.json --report $W/b_$v > $W/bench_$v.txt 2>&1
  echo "bench $v rc=$?: $(grep -E '^ +[0-9]+  (reduce|conv2d)' $W/bench_$v.txt | awk '{printf "%s ", $(NF-10)}')"
done; save
(cd bench && timeout 120 python3 compare_torch.py --suite $W/three.txt --opsched $W/b_grid/report.json \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare.txt
echo "done $(( $(date +%s) - T0 ))s"; save
