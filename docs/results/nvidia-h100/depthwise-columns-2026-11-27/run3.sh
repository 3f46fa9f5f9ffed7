#!/usr/bin/env bash
# run 3: vector staging with swapped halves, not at stride 2 with Q < 32; A/B and ncu of lines 5 and 12
set -x
tar xJf .out/h3/bundle.tar.xz -C .
mkdir -p .bundle/prev && xz -dc .out/h3/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv
R=bench/records/nvidia-h100
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
.bundle/run_tests > $OUT/gpu-tests.txt 2>&1; echo "tests rc=$?"; tail -5 $OUT/gpu-tests.txt
for i in 1 2; do
  for b in opsched_prev opsched; do
    .bundle/run $b bench --suite .out/h3/dw.txt --records $RECS --model $R/model.opsm --rounds 3 --min-time-ms 20 --no-progress --wide --update-baseline --baseline /tmp/bl_$b.json --report /tmp/rep_$b > $OUT/bench_${b}_$i.txt 2>&1
  done
done
grep -h "^ *[0-9]* *conv2d" $OUT/bench_*_2.txt | awk '{print $1, $(NF-10)}' | head -30
sed -n 5p .out/h3/dw.txt > /tmp/one.txt
export LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
timeout 300 ncu --kernel-name regex:DepthwiseStaged --launch-count 1 --set full .bundle/bin/opsched bench --suite /tmp/one.txt --records $RECS --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/b1.json --report /tmp/r1 > $OUT/ncu-line5-vector.txt 2>&1
echo ncu rc=$?
grep -E "Duration|Issue Slots Busy|DRAM Throughput|Executed Ipc A|bank" $OUT/ncu-line5-vector.txt | head -12
sed -n 12p .out/h3/dw.txt > /tmp/one12.txt
for b in opsched_prev opsched; do
timeout 200 ncu --kernel-name regex:DepthwiseStaged --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis .bundle/bin/$b bench --suite /tmp/one12.txt --records $RECS --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/b2.json --report /tmp/r2 > $OUT/ncu-line12-$b.txt 2>&1
grep -E "Duration|Issue Slots Busy|bank" $OUT/ncu-line12-$b.txt | head -8
done
