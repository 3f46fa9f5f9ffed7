#!/usr/bin/env bash
# run 1 (h29): scatter_cuda_bucketed for i32/i64 data, updates sorted as stored (2 bytes for f16/bf16, was 4).
# scatter_test on the GPU; A/B prev vs this build with shipped records+model (2 rounds); same with the model only
# (no records: how untuned lines are served); every bucketed config of 12 dtypes.txt scatter lines (grid);
# the dtypes suite with the grid records added, compare_torch.
set -uo pipefail
T0=$(date +%s); ROOT=$(pwd)
W=/tmp/res1; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h29/*.txt $W/
H=.out/h29; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res1 && cd - > /dev/null; }
timeout 200 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[  FAILED" $W/gpu-tests.txt; save
B="--model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  timeout 60 .bundle/run opsched_prev bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 60 .bundle/run opsched bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
done
timeout 60 .bundle/run opsched_prev bench --suite $H/ab.txt $B --baseline /tmp/bpm.json --report /tmp/rpm > $W/model_before.txt 2>&1
timeout 60 .bundle/run opsched bench --suite $H/ab.txt $B --baseline /tmp/bnm.json --report /tmp/rnm > $W/model_after.txt 2>&1
echo "ab $(( $(date +%s) - T0 ))s"; save
timeout 200 .bundle/run opsched tune --suite $H/grid.txt --records $W/grid.log --policy grid --trials 400 --implementations scatter_cuda_bucketed --min-time-ms 5 --no-progress --wide > $W/grid.txt 2>&1
echo "grid rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 90 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $R/dtypes.log $W/grid.log $B --baseline /tmp/bd.json --report /tmp/rd > $W/dtypes_bench.txt 2>&1
echo "dtypes bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite suites/dtypes.txt --opsched /tmp/rd/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2 model_before model_after; do echo $f; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s:%s ", $1, $i, $(i+2); break}}'; echo; done
grep -E "speedup" compare.txt | tail -5
