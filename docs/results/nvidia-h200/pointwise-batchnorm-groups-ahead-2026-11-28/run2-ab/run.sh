#!/usr/bin/env bash
# h43: the channels-last batch-norm kernel with groups in flight and the hoisted plan's dependent launch,
# against the build of 8c98450 (prev): GPU tests, A/B interleaved (2 rounds), line 15 tuned again, PyTorch beside.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h43; cp $H/run.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
for t in pointwise_batchnorm_test pointwise_hoist_test; do
  timeout 150 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(tail -1 $W/$t.txt) $(( $(date +%s) - T0 ))s"
done
save
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  for b in prev new; do
    bin=opsched; [ $b = prev ] && bin=opsched_prev
    timeout 120 .bundle/run $bin bench --suite $H/ab.txt --records $H/l15_h200.log $B --baseline /tmp/b$b$i.json --report /tmp/r$b$i > $W/ab_${b}_$i.txt 2>&1
    echo "bench $b $i rc=$? $(( $(date +%s) - T0 ))s"
  done
  save
done
# line 15: the batch-norm implementation's whole grid again with the new kernel
cp $H/l15_h200.log $W/l15_new.log
timeout 100 .bundle/run opsched tune --suite $H/l15.txt --records $W/l15_new.log --policy grid --trials 300 \
  --implementations pointwise_cuda_batchnorm --min-time-ms 5 --no-progress > $W/tune_l15.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/ab.txt --opsched /tmp/rnew2/report.json --compile \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "compare $(( $(date +%s) - T0 ))s"; save
timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --launch-skip 12 --launch-count 4 .bundle/run opsched bench --suite $H/l15.txt --records $H/l15_h200.log --rounds 1 --min-repeats 10 \
    --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/n.json > $W/ncu_l15.txt 2>&1
echo "ncu rc=$? $(( $(date +%s) - T0 ))s"
save; echo "done $(( $(date +%s) - T0 ))s"
