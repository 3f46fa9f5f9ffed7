#!/usr/bin/env bash
# run 2 (h17): the interpreter's dispatch as a jump table (nvcc --jump-table-density=50 on
# pointwise_cuda_interpreted.cu: one BRX instead of a binary search of compares and
# branches). GPU tests; the same code built without the flag (prev) against this build,
# interleaved, two rounds, over 24 interpreted chains (pointwise.txt lines 7, 14, 16; the
# train file's interpreted lines; 11 held-out chains served by the rule); then bench +
# compare_torch (eager, torch.compile) of this build.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h17; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 150 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)" $W/gpu-tests.txt
B="--records $R/pointwise.log --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 120 .bundle/run opsched_prev bench --suite $H/ab.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 120 .bundle/run opsched bench --suite $H/ab.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
  echo "round $i $(( $(date +%s) - T0 ))s"
done
timeout 120 .bundle/run opsched bench --suite $H/ab.txt --records $R/pointwise.log --rounds 2 --min-time-ms 10 --no-progress \
  --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $W/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 200 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rep/report.json --compile \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res
cd res && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +pointwise" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
grep -E "geomean" compare.txt | tail -3
