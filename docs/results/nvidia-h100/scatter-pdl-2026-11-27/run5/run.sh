#!/usr/bin/env bash
# run 5 (h20): out-of-place parallel scatter launched as the copy kernel's programmatic
# dependent (griddepcontrol): indices and updates read while the copy of data into out
# finishes. GPU tests (scatter_test); HEAD's build (prev) against this one, interleaved,
# two rounds, over 17 scatter lines served by the parallel kernel (dtypes, held-out,
# scatter.txt); compare_torch on dtypes lines 6-10.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res5; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h20; R=bench/records/nvidia-h100
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
  cd /tmp && tar czf $OUT/results.tar.gz res5 && cd - > /dev/null
done
timeout 80 .bundle/run opsched bench --suite $H/torch.txt --records $R/dtypes.log --rounds 2 --min-time-ms 10 --no-progress \
  --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $W/bench.txt 2>&1
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/torch.txt --opsched /tmp/rep/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res5
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
grep -E "speedup|x " compare.txt | tail -8
