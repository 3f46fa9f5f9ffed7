#!/usr/bin/env bash
# h45: bench/suites/pointwise_heldout.txt (never tuned), rules alone, the build of 8c98450 (prev) against
# c9fe21e (new), two rounds each; PyTorch eager and torch.compile beside the new build.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h45; cp $H/run.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
S=bench/suites/pointwise_heldout.txt
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1; do
  for b in prev new; do
    bin=opsched; [ $b = prev ] && bin=opsched_prev
    timeout 150 .bundle/run $bin bench --suite $S $B --baseline /tmp/b$b$i.json --report /tmp/r$b$i > $W/ho_${b}_$i.txt 2>&1
    echo "bench $b $i rc=$? $(( $(date +%s) - T0 ))s"
  done
  save
done
(cd bench && timeout 120 python3 compare_torch.py --suite suites/pointwise_heldout.txt --opsched /tmp/rnew1/report.json --compile \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
save; echo "done $(( $(date +%s) - T0 ))s"
