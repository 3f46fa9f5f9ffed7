#!/usr/bin/env bash
set -uo pipefail
W=/tmp/res; mkdir -p $W; H=.out/h123; R=bench/records/nvidia-h200
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64 timeout 200 ncu --kernel-name regex:DepthwiseNhwcStaged --launch-skip 5 --launch-count 1 $SEC \
  .bundle/bin/opsched bench --suite $PWD/$H/line37.txt --records $L --rounds 1 --min-time-ms 5 --no-progress --update-baseline --baseline /tmp/b.json --report /tmp/rep > $OUT/ncu_line37.txt 2>&1
echo "ncu rc=$?"; grep -E "Duration|Throughput|Occupancy|Registers|Block Limit|Waves|Shared Memory Config" $OUT/ncu_line37.txt | head -40
