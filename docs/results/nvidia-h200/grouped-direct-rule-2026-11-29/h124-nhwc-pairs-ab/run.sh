#!/usr/bin/env bash
# h124 (H200): two channels a lane in the channels-last staged depthwise kernel (16-bit 3x3 layers of an even
# channel count). Every config of conv2d_cuda_depthwise_staged_nhwc (grid) on dtypes.txt line 37 and four channels-last train layers, with
# the kernel before (opsched_old, the h120 build) and after (opsched), alternating; then dtypes.txt served beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h124; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
G="--policy grid --implementations conv2d_cuda_depthwise_staged_nhwc --no-progress --wide"
for round in 1 2; do
  for b in opsched_old opsched; do
    timeout 100 .bundle/run $b tune --suite $W/nhwc.txt --records $W/grid_${b}_$round.log $G > $W/grid_${b}_$round.txt 2>&1
    echo "grid $b $round rc=$? $(( $(date +%s) - T0 ))s"; grep -A7 "^line" $W/grid_${b}_$round.txt | cut -c1-60,170-260
  done
done
save
echo "done $(( $(date +%s) - T0 ))s"; save
