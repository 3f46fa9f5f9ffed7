#!/usr/bin/env bash
# h100 (H200): (1) the 29 tuned pointwise lines tuned again with HEAD's kernels (xgb, 48 trials) into a fresh log;
# (2) dtypes.txt scatter lines 7 (i64 assignment of 2^20) and 9 (i32 scatter-add 8192x256 into 1000x256): PyTorch's
# pieces timed apart, and Nsight Compute on opsched's kernels (served from the shipped logs) and PyTorch's.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h100; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.py $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/tuned.txt
timeout 200 .bundle/run opsched tune --suite $W/tuned.txt --records $W/pw_new.log --trials 48 --no-progress > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -2 $W/tune.txt; save
python3 $W/sc.py > $W/sc.txt 2>&1; cat $W/sc.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
S="--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats"
for n in 7 9; do
  sed -n "${n}p" bench/suites/dtypes.txt > $W/line$n.txt; cat $W/line$n.txt
  timeout 100 ncu --launch-skip 30 --launch-count 6 $S .bundle/run opsched bench --suite $W/line$n.txt --records $L \
    --rounds 1 --min-time-ms 5 --no-progress --baseline /tmp/b$n.json --update-baseline > $W/ncu_opsched_$n.txt 2>&1
  echo "ncu opsched $n rc=$? $(( $(date +%s) - T0 ))s"; save
done
timeout 120 ncu --kernel-name regex:scatter --launch-count 6 $S python3 $W/sc.py x > $W/ncu_torch.txt 2>&1
echo "ncu torch rc=$? $(( $(date +%s) - T0 ))s"
for f in $W/ncu_opsched_*.txt $W/ncu_torch.txt; do echo "== $f"
  grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|L2 Cache Throughput|Achieved Occ|Registers Per|Grid Size|Block Size" $f | cut -c1-120 | tail -60
done > $W/ncu_summary.txt
echo "done $(( $(date +%s) - T0 ))s"; save
