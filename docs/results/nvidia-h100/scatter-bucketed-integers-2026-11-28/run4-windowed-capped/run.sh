#!/usr/bin/env bash
# run 6 (h34): the windowed apply again, its pairs kernel's grid capped at 2048 blocks. scatter_test on the GPU; A/B of
# HEAD's kernel (prev) and this one with the shipped records (2 rounds); grid of the
# bucketed space on the 7 tuned lines; compare_torch; Nsight Compute per-kernel times of the f32 2^24 assignment.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res6; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h34/*.txt $W/
H=.out/h34; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res6 && cd - > /dev/null; }
timeout 300 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[  FAILED|^\[       OK.*Bucketed" $W/gpu-tests.txt; save
B="--model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 90 .bundle/run $bin bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/b$b$i.json --report /tmp/r$b$i > $W/ab_${b}_$i.txt 2>&1
  done
done
echo "ab $(( $(date +%s) - T0 ))s"; save
timeout 200 .bundle/run opsched tune --suite $H/tuned.txt --records $W/grid.log --policy grid --trials 400 --implementations scatter_cuda_bucketed --min-time-ms 5 --no-progress --wide > $W/grid.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 90 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $W/grid.log $B --baseline /tmp/bg.json --report /tmp/rg > $W/ab_grid.txt 2>&1
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rg/report.json \
   --benchmark both --json $W/compare_ab.json --markdown $W/compare_ab.md > $W/compare_ab.txt 2>&1; echo "compare ab rc=$?")
save
export LD_LIBRARY_PATH=$(pwd)/.bundle/lib:/usr/local/cuda/lib64
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
for b in prev new; do
  bin=.bundle/bin/opsched_$b; [ $b = new ] && bin=.bundle/bin/opsched
  timeout 120 ncu --cache-control none --kernel-name regex:"Pairs|Apply|Radix|Onesweep" --launch-count 10 --metrics $M $bin bench --suite $H/one.txt \
    --records $RECS --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bn_$b.json --report /tmp/rn_$b > $W/ncu-$b.txt 2>&1
  echo "ncu $b rc=$?"
done
save
cd $W && for f in ab_prev_1 ab_new_1 ab_prev_2 ab_new_2 ab_grid; do echo $f; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
for b in prev new; do echo "ncu $b"; grep -E "^  [a-z].*\(|gpu__time_duration|dram__bytes" ncu-$b.txt | sed 's/(scatter::Params.*//; s/  */ /g' | head -40; done
grep -E "speedup" compare_ab.txt | tail -2
