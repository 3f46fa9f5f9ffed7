#!/usr/bin/env bash
# h123 (H200): dtypes.txt served as shipped beside PyTorch (the final code of the forty-third session; dtypes.txt's
# lines all have exact records, so the session's rule and contest change none of them), and Nsight Compute on
# dtypes.txt line 37's kernel (the bf16 channels-last MobileNetV2 depthwise layer, conv2d_cuda_depthwise_staged_nhwc).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h123; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
S=$PWD/bench/suites/dtypes.txt
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 120 .bundle/run opsched bench --suite $S --records $L $B --baseline /tmp/d.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 250 python3 compare_torch.py --suite $S --opsched $W/dtypes/report.json \
   --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes.txt; save
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64 timeout 150 ncu --kernel-name regex:DepthwiseNhwcStaged --launch-skip 5 --launch-count 1 $SEC \
  .bundle/bin/opsched bench --suite $W/line37.txt --records $L --rounds 1 --min-time-ms 5 --no-progress > $W/ncu_line37.txt 2>&1
echo "ncu rc=$? $(( $(date +%s) - T0 ))s"; grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers|Block Limit|Waves" $W/ncu_line37.txt | head -30
echo "done $(( $(date +%s) - T0 ))s"; save
