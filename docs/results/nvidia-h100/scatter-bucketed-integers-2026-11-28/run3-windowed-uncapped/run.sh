#!/usr/bin/env bash
# run 4 (h32): the bucketed scatter's windowed apply (each window of out copied just before its bucket's updates).
# scatter_test on the GPU; A/B against the build of run 2 (prev) with the shipped records (2 rounds) on the lines
# bucketed serves (8; 2 held-out); every bucketed config of the 7 tuned ones (grid); bench with those records added and
# compare_torch on ab.txt and on dtypes.txt.
set -uo pipefail
T0=$(date +%s); ROOT=$(pwd)
W=/tmp/res4; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h32/*.txt $W/
H=.out/h32; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res4 && cd - > /dev/null; }
timeout 300 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[  FAILED|^\[       OK.*Bucketed" $W/gpu-tests.txt; save
B="--model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  timeout 90 .bundle/run opsched_prev bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bp$i.json --report /tmp/rp$i > $W/ab_before_$i.txt 2>&1
  timeout 90 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bn$i.json --report /tmp/rn$i > $W/ab_after_$i.txt 2>&1
done
echo "ab $(( $(date +%s) - T0 ))s"; save
timeout 200 .bundle/run opsched tune --suite $H/tuned.txt --records $W/grid.log --policy grid --trials 400 --implementations scatter_cuda_bucketed --min-time-ms 5 --no-progress --wide > $W/grid.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 90 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $W/grid.log $B --baseline /tmp/bg.json --report /tmp/rg > $W/ab_grid.txt 2>&1
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rg/report.json \
   --benchmark both --json $W/compare_ab.json --markdown $W/compare_ab.md > $W/compare_ab.txt 2>&1; echo "compare ab rc=$?")
save
timeout 90 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $R/dtypes.log $W/grid.log $B --baseline /tmp/bd.json --report /tmp/rd > $W/dtypes_bench.txt 2>&1
(cd bench && timeout 150 python3 compare_torch.py --suite suites/dtypes.txt --opsched /tmp/rd/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2 ab_grid; do echo $f; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s:%s ", $1, substr($i,14), $(i+2); break}}'; echo; done
$ROOT/.bundle/run opsched records best $W/grid.log --limit 0 | cut -c1-60,200-400 | head -12
grep -E "speedup" compare_ab.txt compare.txt | tail -6
