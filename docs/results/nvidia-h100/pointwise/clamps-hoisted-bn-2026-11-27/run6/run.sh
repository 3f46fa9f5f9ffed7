#!/usr/bin/env bash
# run 6 (h15): the channels-last batch-norm grid sized to one wave of the device by the
# occupancy query at Prepare (rounded down to a multiple of q): GPU tests, then the build before (7c855b0, run 5's kernels) and
# this one interleaved, two rounds, over 15 chains served by the batchnorm kernels.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h15; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 120 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== .*(PASSED|FAILED)" $W/gpu-tests.txt
B="--records $R/pointwise.log --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 150 .bundle/run opsched_prev bench --suite $H/ab.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 150 .bundle/run opsched bench --suite $H/ab.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
  echo "round $i $(( $(date +%s) - T0 ))s"
done
cd /tmp && tar czf $OUT/results.tar.gz res
cd res && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +pointwise" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
