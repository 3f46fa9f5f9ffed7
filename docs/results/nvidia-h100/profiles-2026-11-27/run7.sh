#!/usr/bin/env bash
# run 7: Nsight Compute on the NHWC bf16 depthwise line (dtypes 37) and on two scatter lines
# below PyTorch (dtypes 7 and 9), ours and PyTorch's kernels
set -x
W=/tmp/res; mkdir -p $W
H=.out/h7
tar xJf $H/bundle.tar.xz -C .
export LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
R=bench/records/nvidia-h100
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
B="bench --records $RECS --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/b.json --report /tmp/r"
timeout 240 ncu --kernel-name regex:DepthwiseNhwc --launch-count 1 --set full .bundle/bin/opsched $B --suite $H/nhwc.txt > $W/ncu-nhwc-line37.txt 2>&1
for l in 7 9; do
  timeout 120 ncu --launch-skip 40 --launch-count 6 --section SpeedOfLight --section LaunchStats --section Occupancy .bundle/bin/opsched $B --suite $H/sc$l.txt > $W/ncu-scatter-line$l-ours.txt 2>&1
  timeout 120 ncu --launch-skip 6 --launch-count 6 --section SpeedOfLight --section LaunchStats --section Occupancy python3 $H/torch_sc.py $l > $W/ncu-scatter-line$l-torch.txt 2>&1
done
grep -E "^  [a-zA-Z_].*\(|Duration" $W/ncu-scatter-*.txt | cut -c1-200
grep -E "Duration|Issue Slots Busy|DRAM Throughput|Executed Ipc A|bank|Registers Per|Achieved Occ|Theoretical Occ" $W/ncu-nhwc-line37.txt
cd /tmp && tar czf $OUT/results.tar.gz res
