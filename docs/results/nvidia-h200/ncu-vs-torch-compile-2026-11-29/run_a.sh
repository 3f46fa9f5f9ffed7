#!/usr/bin/env bash
# h96 (H200): Nsight Compute on torch.compile's (Triton's) kernels for the 8-op chain and bias+GELU over
# 64M f32: instructions an element and issue/DRAM load, to set beside opsched's (ncu-h86: 53 and 38).
set -uo pipefail
W=/tmp/res; mkdir -p $W; cp .out/h96/* $W/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
S="--section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats"
timeout 250 ncu --kernel-name regex:triton --launch-skip 8 --launch-count 2 $S python3 $W/tc.py > $W/ncu_torch_compile.txt 2>&1
echo "ncu rc=$?"
grep -E "  triton|Duration|Executed Instructions  |DRAM Throughput|Issue Slots Busy|Registers Per|Block Size|Grid Size|Achieved Occ" $W/ncu_torch_compile.txt
(cd /tmp && tar czf $OUT/results.tar.gz res)
