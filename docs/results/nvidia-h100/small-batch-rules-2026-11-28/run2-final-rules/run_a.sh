#!/usr/bin/env bash
# run 2 (h40): the final rules (staged depthwise nchw: tiles of 32/16 rows below 4 blocks an SM, strips of 2 rows where
# a block's threads idle; specialised pointwise: 16 bytes a tensor) and the 7 new train lines' records in models.log.
# conv2d_test on the GPU; rules alone A/B against 61f7efa's build (prev), 2 rounds, conv lines and pointwise lines;
# the held-out models file with the shipped records and model beside PyTorch; compare_torch of the pointwise rules.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res2; rm -rf $W; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h40/*.txt $W/
H=.out/h40; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res2 && cd - > /dev/null; }
timeout 150 .bundle/run_tests --gtest_filter='*cuda*' > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $W/gpu-tests.txt
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 60 .bundle/run $bin bench --suite $H/ab_conv.txt $B --baseline /tmp/c$b$i.json --report /tmp/rc$b$i > $W/conv_${b}_$i.txt 2>&1
  done
done
echo "conv A/B $(( $(date +%s) - T0 ))s"; save
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
timeout 200 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $RECS --model $R/model.opsm $B \
  --reference bench/reference/nvidia-h100/heldout.log \
  --baseline /tmp/h.json --report /tmp/rh > $W/heldout_bench.txt 2>&1; echo "heldout bench rc=$?"
(cd bench && timeout 240 python3 compare_torch.py --suite suites/models/heldout.txt --opsched /tmp/rh/report.json \
   --benchmark both --json $W/heldout_vs_pytorch.json --markdown $W/heldout_vs_pytorch.md > $W/heldout_vs_pytorch.txt 2>&1; echo "compare rc=$?")
echo "heldout $(( $(date +%s) - T0 ))s"; save
grep -E "served/best|geomean" $W/heldout_bench.txt $W/heldout_vs_pytorch.txt | tail -6
