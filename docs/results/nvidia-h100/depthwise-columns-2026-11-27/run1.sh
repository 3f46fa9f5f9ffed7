#!/usr/bin/env bash
# run 1: GPU tests of the vector staging, A/B of the staged nchw depthwise kernel, ncu of line 5
set -x
tar xJf .out/h1/bundle.tar.xz -C .
mkdir -p .bundle/prev && xz -dc .out/h1/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv
R=bench/records/nvidia-h100
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
.bundle/run_tests > $OUT/gpu-tests.txt 2>&1; echo "tests rc=$?"; tail -5 $OUT/gpu-tests.txt
for i in 1 2; do
  for b in opsched_prev opsched; do
    .bundle/run $b bench --suite .out/h1/dw.txt --records $RECS --model $R/model.opsm --rounds 3 --min-time-ms 20 --no-progress --wide --update-baseline --baseline /tmp/bl_$b.json --report /tmp/rep_$b > $OUT/bench_${b}_$i.txt 2>&1
  done
done
grep -h "^ *[0-9]* *conv2d" $OUT/bench_*_2.txt | awk '{print $1, $(NF-10)}' | head -30
sed -n 5p .out/h1/dw.txt > /tmp/one.txt
export LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
timeout 300 ncu --kernel-name regex:DepthwiseStaged --launch-count 1 --set full .bundle/bin/opsched bench --suite /tmp/one.txt --records $RECS --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/b1.json --report /tmp/r1 > $OUT/ncu-line5-vector.txt 2>&1
echo ncu rc=$?
grep -E "Duration|Issue Slots Busy|DRAM Throughput|Executed Ipc A|bank" $OUT/ncu-line5-vector.txt | head -12
