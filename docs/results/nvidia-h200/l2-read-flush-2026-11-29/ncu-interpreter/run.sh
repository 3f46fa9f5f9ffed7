#!/usr/bin/env bash
# h76 (H200): Nsight Compute of the interpreter on three chains, each served as `opsched bench` serves it (read
# flush): pointwise.txt's 8-op chain, the held-out QuickGELU f16 chain (72% of copy, 0.73x torch.compile in h74)
# and the held-out f32 residual relu(x+b+r) (85% of copy): where does the time go (issue, occupancy, memory)?
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h76; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/pointwise.log"
Q="--rounds 1 --min-time-ms 1 --no-progress --update-baseline --report /tmp/rq"
for k in 1 2 3; do
  sed -n ${k}p $H/ncu3.txt > /tmp/one$k.txt
  timeout 150 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats --section InstructionStats -o /tmp/rep$k -f \
    .bundle/run opsched bench --suite /tmp/one$k.txt --records $L $Q --baseline /tmp/bq$k.json > $W/ncu$k.log 2>&1
  ncu -i /tmp/rep$k.ncu-rep --page details > $W/ncu_details$k.txt 2>&1
  echo "ncu $k rc=$? $(( $(date +%s) - T0 ))s"; save
  grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Executed Ipc Active|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Executed Instructions  |Block Size|Grid Size|Issue Slots Busy|No Eligible" $W/ncu_details$k.txt | head -20
done
echo "done $(( $(date +%s) - T0 ))s"; save
