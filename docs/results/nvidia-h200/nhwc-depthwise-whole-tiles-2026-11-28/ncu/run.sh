#!/usr/bin/env bash
# h59 (H200): Nsight Compute of the channels-last bf16 depthwise layer (dtypes.txt line 37): our staged kernel in
# its best config (h58's grid) and PyTorch's kernel.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h59; cp $H/*.sh $H/*.py $W/
tar xJf .out/h58/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats"
timeout 120 ncu --kernel-name regex:DepthwiseNhwc --launch-count 1 --launch-skip 3 $S .bundle/run opsched bench --suite $H/line37.txt \
  --records $H/line37.log --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq > $W/ncu-ours.txt 2>&1
echo "ours rc=$? $(( $(date +%s) - T0 ))s"; save
timeout 120 ncu --launch-count 2 --launch-skip 2 --kernel-name regex:'^(?!.*(elementwise|distribution|normal|copy|fill)).*' $S python3 $H/torch_dw.py > $W/ncu-torch.txt 2>&1
echo "torch rc=$? $(( $(date +%s) - T0 ))s"; save
grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Compute \(SM\)|Issued Warp|No Eligible|Warp Cycles Per Issued|Shared Memory Configuration|Dynamic Shared" $W/ncu-ours.txt $W/ncu-torch.txt | head -80
