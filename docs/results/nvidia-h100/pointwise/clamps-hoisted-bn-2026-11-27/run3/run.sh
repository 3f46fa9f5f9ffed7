#!/usr/bin/env bash
# run 3 (h12): a general batchnorm kernel (kGeneral: clamps, the constant factor, the
# channels-last staging of the block's span only) beside the kernel of HEAD, unchanged:
# GPU tests, line 15 tuned again with batchnorm in its space, the reference tuning of the
# two new held-out ReLU6 chains again (never served), the build before (HEAD) against this
# one interleaved, then bench + compare_torch (eager, torch.compile) of the new build.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h12; R=bench/records/nvidia-h100
I="pointwise_cuda_interpreted pointwise_cuda_hoisted pointwise_cuda_batchnorm"
tar xJf $H/bundle.tar.xz -C .
xz -dc .out/h9/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 240 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|SKIPPED \]" $W/gpu-tests.txt | head -20
timeout 120 .bundle/run opsched tune --suite $H/tune.txt --records $W/line15.log --transfer $R/pointwise.log \
  --policy xgb --trials 24 --implementations $I --no-progress --wide > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched tune --suite $H/heldout_new.txt --records $W/heldout_new_reference.log \
  --policy xgb --trials 24 --implementations $I --no-progress --wide > $W/reference.txt 2>&1
echo "reference rc=$? $(( $(date +%s) - T0 ))s"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 150 .bundle/run opsched_prev bench --suite $H/ab.txt --records $R/pointwise.log $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 150 .bundle/run opsched bench --suite $H/ab.txt --records $R/pointwise.log $W/line15.log $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
done
echo "ab $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched bench --suite $H/ab.txt --records $R/pointwise.log $W/line15.log --reference $W/heldout_new_reference.log \
  --rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $W/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 200 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rep/report.json --compile \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res
cd res && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +pointwise" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {printf "%s:%s:%s ", $1, $i, $(i+2); break}}'; echo; done
grep -E "geomean|x " compare.txt | tail -12
