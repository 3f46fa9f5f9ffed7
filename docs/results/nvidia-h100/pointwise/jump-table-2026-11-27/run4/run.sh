#!/usr/bin/env bash
# run 4 (h19): the jump table for the 8- and 16-lane kernels only (their own translation
# unit); 1, 2 and 4 lanes as before. GPU tests; the build without any jump table (prev,
# as in run 2 and 3) against this one, interleaved, two rounds, over run 3's 12 chains.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res4; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h19; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 150 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)" $W/gpu-tests.txt
B="--records $R/pointwise.log --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 100 .bundle/run opsched_prev bench --suite $H/ab2.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 100 .bundle/run opsched bench --suite $H/ab2.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
  echo "round $i $(( $(date +%s) - T0 ))s"
  cd /tmp && tar czf $OUT/results.tar.gz res4 && cd - > /dev/null
done
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +pointwise" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
