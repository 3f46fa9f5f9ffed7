#!/usr/bin/env bash
# run 3 (h41): the batch-norm kernel's two-groups-a-step loop, A/B against the build of 4488011 (prev), interleaved,
# 2 rounds, over 11 batch-norm-family chains, with the shipped records and model and with rules alone. (The
# compare_torch step at the end did not run: the call reached its 500 s limit after the eight benches.)
set -uo pipefail
T0=$(date +%s)
W=/tmp/res3; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h41; R=bench/records/nvidia-h100
[ -x .bundle/bin/opsched_prev ] || { tar xJf $H/bundle.tar.xz -C . && xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res3 && cd - > /dev/null; }
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for mode in rec rule; do
  M=""; [ $mode = rec ] && M="--records $RECS --model $R/model.opsm"
  for i in 1 2; do
    for b in prev new; do
      bin=opsched_$b; [ $b = new ] && bin=opsched
      timeout 100 .bundle/run $bin bench --suite $H/ab_bn.txt $M $B --baseline /tmp/b$mode$b$i.json --report /tmp/r$mode$b$i > $W/${mode}_${b}_$i.txt 2>&1
      echo "$mode $b $i rc=$? $(( $(date +%s) - T0 ))s"
    done
    save
  done
done
(cd bench && timeout 150 python3 compare_torch.py --suite ../$H/ab_bn.txt --opsched /tmp/rrecnew2/report.json \
   --benchmark both --json $W/compare_bn.json --markdown $W/compare_bn.md > $W/compare_bn.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
grep -E "speedup|geomean|copy" $W/compare_bn.txt | tail -6
