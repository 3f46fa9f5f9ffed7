#!/usr/bin/env bash
# h42: facts on the H200 for the batch-norm chains and line 15 of pointwise.txt (no code change).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h42; cp $H/run.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
# 1. every config of three implementations on line 15 (grid), H200 records of our own
timeout 150 .bundle/run opsched tune --suite $H/l15.txt --records $W/l15.log --policy grid --trials 300 \
  --implementations pointwise_cuda_batchnorm pointwise_cuda_hoisted pointwise_cuda_interpreted --min-time-ms 5 --no-progress > $W/tune_l15.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"
.bundle/run opsched records show $W/l15.log --limit 0 --wide > $W/l15_records.txt 2>&1; save
# 2. the 11 batch-norm chains and line 8 (bias+GELU, specialised) served by rules, and line 15 from its H200 records
cat $H/bn.txt $H/ref.txt > $W/suite.txt
timeout 120 .bundle/run opsched bench --suite $W/suite.txt --records $W/l15.log --rounds 2 --min-time-ms 10 --no-progress --wide \
  --update-baseline --baseline /tmp/b.json --report $W/rep > $W/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite $W/suite.txt --opsched $W/rep/report.json --compile \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "compare $(( $(date +%s) - T0 ))s"; save
# 3. Nsight Compute on line 15 as served, and on line 8
for s in l15 ref; do
  timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --launch-skip 12 --launch-count 6 .bundle/run opsched bench --suite $H/$s.txt --records $W/l15.log --rounds 1 --min-repeats 10 \
    --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/n.json > $W/ncu_$s.txt 2>&1
  echo "ncu $s rc=$? $(( $(date +%s) - T0 ))s"
done
save; echo "done $(( $(date +%s) - T0 ))s"
