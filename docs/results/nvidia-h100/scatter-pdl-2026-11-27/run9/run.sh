#!/usr/bin/env bash
# run 9 (h23): the paired f16/bf16 scatter-add kernel as the copy's programmatic dependent too (its targets 32-bit: 36-54 registers, 60 before). GPU tests (scatter_test, graph_capture_test); aed72ec's build (prev) against this one, interleaved, two rounds, over 7 f16/bf16 and i32 scatter-adds; compare_torch on them.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res9; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h23; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 200 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)" $W/gpu-tests.txt
B="--records $R/scatter.log $R/dtypes.log $R/models.log --model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 100 .bundle/run opsched_prev bench --suite $H/ab.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 100 .bundle/run opsched bench --suite $H/ab.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
  echo "round $i $(( $(date +%s) - T0 ))s"
  cd /tmp && tar czf $OUT/results.tar.gz res9 && cd - > /dev/null
done
timeout 120 .bundle/run opsched bench --suite $H/ab.txt --records $R/scatter.log $R/dtypes.log $R/models.log --model $R/model.opsm --rounds 2 --min-time-ms 10 --no-progress \
  --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $W/bench.txt 2>&1
(cd bench && timeout 150 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rep/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res9
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
grep -E "speedup|x " compare.txt | tail -8
