#!/usr/bin/env bash
# run 7 (h35): the windowed apply as a knob of the bucketed scatter (windows, 0 by default). scatter_test on the GPU; A/B
# against HEAD's kernel (prev) with the shipped records (2 rounds: no change expected) on the bucketed lines and the
# held-out scatter lines; every bucketed config of the 7 tuned lines (grid, 72 configs); bench and compare_torch with
# those records on ab.txt and dtypes.txt.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res7; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h35/*.txt $W/
H=.out/h35; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res7 && cd - > /dev/null; }
timeout 300 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[  FAILED|^\[       OK.*Bucketed" $W/gpu-tests.txt; save
B="--model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 90 .bundle/run $bin bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/b$b$i.json --report /tmp/r$b$i > $W/ab_${b}_$i.txt 2>&1
    timeout 60 .bundle/run $bin bench --suite $H/heldout.txt --records $RECS $B --baseline /tmp/h$b$i.json --report /tmp/h$b$i > $W/held_${b}_$i.txt 2>&1
  done
done
echo "ab $(( $(date +%s) - T0 ))s"; save
timeout 240 .bundle/run opsched tune --suite $H/tuned.txt --records $W/grid.log --policy grid --trials 400 --implementations scatter_cuda_bucketed --min-time-ms 5 --no-progress --wide > $W/grid.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 90 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $W/grid.log $B --baseline /tmp/bg.json --report /tmp/rg > $W/ab_grid.txt 2>&1
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rg/report.json \
   --benchmark both --json $W/compare_ab.json --markdown $W/compare_ab.md > $W/compare_ab.txt 2>&1; echo "compare ab rc=$?")
save
timeout 90 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $R/dtypes.log $W/grid.log $B --baseline /tmp/bd.json --report /tmp/rd > $W/dtypes_bench.txt 2>&1
(cd bench && timeout 150 python3 compare_torch.py --suite suites/dtypes.txt --opsched /tmp/rd/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
cd $W && for f in ab_prev_1 ab_new_1 ab_prev_2 ab_new_2 ab_grid held_prev_1 held_new_1 held_prev_2 held_new_2; do echo -n "$f: "; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s ", $(i+2); break}}'; echo; done
grep -E "speedup" compare_ab.txt compare.txt | tail -4
