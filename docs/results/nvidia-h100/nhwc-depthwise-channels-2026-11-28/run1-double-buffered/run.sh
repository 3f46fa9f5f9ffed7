#!/usr/bin/env bash
# run 1 (h25): the nhwc staged depthwise kernel double-buffered, several tiles a block (one wave). conv2d_test (nhwc/depthwise cases) on the GPU; HEAD's build (prev, 13b50e9) against this one, interleaved, two rounds, over 17 channels-last depthwise layers; compare_torch on them.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res1; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h25/ab.txt $W/
H=.out/h25; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 240 .bundle/run_tests --gtest_filter='*Nhwc*:*Depthwise*:*depthwise*' > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[       OK|^\[  FAILED" $W/gpu-tests.txt | head -30
cd /tmp && tar czf $OUT/results.tar.gz res1 && cd - > /dev/null
B="--records $R/conv.log $R/models.log $R/dtypes.log --model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 100 .bundle/run opsched_prev bench --suite $H/ab.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 100 .bundle/run opsched bench --suite $H/ab.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
  echo "round $i $(( $(date +%s) - T0 ))s"
  cd /tmp && tar czf $OUT/results.tar.gz res1 && cd - > /dev/null
done
cp /tmp/rn/report.json $W/report_after.json 2>/dev/null
(cd bench && timeout 150 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rn/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res1
cd $W && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +conv2d" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^conv2d_/) {printf "%s:%s:%s ", $1, $i, $(i+2); break}}'; echo; done
grep -E "speedup|x " compare.txt | tail -8
