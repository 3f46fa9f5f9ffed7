#!/usr/bin/env bash
# h86 (H200): Nsight Compute on the 8-op chain's served kernel (the interpreter, 16 lanes, blocks of 128)
# and on bias+GELU over 64M floats (the specialised kernel): instructions executed, issue activity and
# pipe use, to see what holds them below torch.compile (compute or memory).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h86; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
sed -n 14p bench/suites/pointwise.txt > $W/chain8.txt; sed -n 11p bench/suites/pointwise.txt > $W/biasgelu.txt
for s in chain8:AccumulatorKernel biasgelu:ChainKernel; do
  n=${s%%:*}; k=${s#*:}
  timeout 120 ncu --kernel-name regex:"$k" --launch-count 1 --launch-skip 3 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section InstructionStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    .bundle/run opsched bench --suite $W/$n.txt --records $L --rounds 1 --min-time-ms 1 --no-progress \
    --update-baseline --baseline /tmp/nc$n.json > $W/ncu_$n.txt 2>&1
  echo "$n rc=$? $(( $(date +%s) - T0 ))s"
  grep -E "^  [a-zA-Z_ ]*<|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Executed Ipc Active|Issue Slots Busy|Executed Instructions  |Registers Per Thread|Achieved Occupancy" $W/ncu_$n.txt | sed 's/  */ /g' | cut -c1-160
done
echo "done $(( $(date +%s) - T0 ))s"; save
