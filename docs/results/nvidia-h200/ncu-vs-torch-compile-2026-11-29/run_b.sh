#!/usr/bin/env bash
# h96b (H200): the same kernels with the GPU's own clocks (ncu --clock-control none): torch.compile's 8-op chain and
# bias+GELU kernels beside opsched's (the 8-op chain's interpreter and bias+GELU's specialised kernel, served from
# the shipped logs by opsched bench).
set -uo pipefail
W=/tmp/res; mkdir -p $W; cp .out/h96/* $W/ 2>/dev/null; R=bench/records/nvidia-h200
[ -x .bundle/run ] || tar xJf .out/h95/bundle.tar.xz -C .
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
S="--clock-control none --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats --section WarpStateStats"
timeout 120 ncu --kernel-name regex:triton --launch-skip 8 --launch-count 4 $S python3 $W/tc.py > $W/ncu_torch_compile_boost.txt 2>&1
echo "ncu torch rc=$?"
grep -hv '^#' bench/suites/pointwise.txt | grep . | grep -E '8-op chain|bias\+GELU, 64M' | sed 's/ *#.*//' > $W/two.txt; cat $W/two.txt | cut -c1-80
for k in ChainKernel AccumulatorKernel; do
  timeout 100 ncu --kernel-name regex:$k --launch-skip 20 --launch-count 1 $S .bundle/run opsched bench --suite $W/two.txt \
    --records $L --rounds 1 --min-time-ms 5 --no-progress --baseline /tmp/b$k.json --update-baseline > $W/ncu_opsched_${k}_boost.txt 2>&1
done
echo "ncu opsched rc=$?"
for f in $W/ncu_torch_compile_boost.txt $W/ncu_opsched_*_boost.txt; do
  grep -E "^  [a-zA-Z_]|SM Frequency|Duration|Executed Instructions  |DRAM Throughput|Issue Slots Busy|Registers Per|Achieved Occ" $f | cut -c1-110
done
(cd /tmp && tar czf $OUT/results.tar.gz res)
