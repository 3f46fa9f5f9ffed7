#!/usr/bin/env bash
# h61 (H200): Nsight Compute of the interpreted 8-op chain (pointwise.txt line 14): executed instructions per SASS
# line, pipes and stalls.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h61; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf .out/h60/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
B="--rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq"
timeout 120 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --launch-skip 3 --section SourceCounters --section SpeedOfLight \
  --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --import-source no -o /tmp/rep -f \
  .bundle/run opsched bench --suite $H/line14.txt --records $R/pointwise.log $B > $W/ncu-rep.txt 2>&1
echo "ncu rc=$? $(( $(date +%s) - T0 ))s"
ncu -i /tmp/rep.ncu-rep --page details > $W/ncu-details.txt 2>&1
ncu -i /tmp/rep.ncu-rep --page source --csv --print-source sass > $W/source-sass.csv 2>&1
echo "export $(wc -l < $W/source-sass.csv) lines"; save
grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|Issue Slots|Registers Per|Block Size|Grid Size|Achieved Occ|Theoretical Occ|Executed Ipc|Stall (Not|Math|Wait|Short|Long|Barrier|Dispatch|Branch|No Inst|MIO)" $W/ncu-details.txt | head -40
