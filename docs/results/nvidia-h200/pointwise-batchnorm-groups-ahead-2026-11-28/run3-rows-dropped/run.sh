#!/usr/bin/env bash
# h44: the channels-last batch-norm kernel's groups in consecutive rows (rows) against c9fe21e's groups a grid
# step apart (groups): GPU tests of the rows build, A/B interleaved (2 rounds), line 15 tuned, PyTorch beside.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h44; cp $H/run.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
for t in pointwise_batchnorm_test pointwise_accumulator_test pointwise_test; do
  timeout 120 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(tail -1 $W/$t.txt) $(( $(date +%s) - T0 ))s"
done
save
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  for b in groups rows; do
    bin=opsched; [ $b = groups ] && bin=opsched_groups
    timeout 100 .bundle/run $bin bench --suite $H/ab2.txt --records $H/l15_h200.log $B --baseline /tmp/b$b$i.json --report /tmp/r$b$i > $W/ab_${b}_$i.txt 2>&1
    echo "bench $b $i rc=$? $(( $(date +%s) - T0 ))s"
  done
  save
done
timeout 60 .bundle/run opsched tune --suite $H/l15.txt --records $W/l15_rows.log --policy grid --trials 100 \
  --implementations pointwise_cuda_batchnorm --min-time-ms 5 --no-progress > $W/tune_l15.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 60 python3 compare_torch.py --suite ../$H/ab2.txt --opsched /tmp/rrows2/report.json --compile \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
timeout 40 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --launch-skip 12 --launch-count 2 .bundle/run opsched bench --suite $H/l15.txt --records $H/l15_h200.log --rounds 1 --min-repeats 10 \
    --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/n.json > $W/ncu_l15.txt 2>&1
echo "ncu rc=$? $(( $(date +%s) - T0 ))s"
save; echo "done $(( $(date +%s) - T0 ))s"
