#!/usr/bin/env bash
# h119 (H200): the refined grouped rules (f32 with 8 or more filters a group: the direct kernel; f16/bf16 with more
# than 4 channels a group: no own rule). The 4 grouped held-out lines served as shipped (logs and model; logs alone)
# against h118's reference tuning of them (never shipped, never fitted on); the 9 grouped lines beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h119; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $H/*.log $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for m in model:"--model $R/model.opsm" logs:""; do
  n=${m%%:*}; extra=${m#*:}
  timeout 100 .bundle/run opsched bench --suite $W/grouped_heldout.txt --records $L $extra --reference $W/reference.log $B \
    --baseline /tmp/$n.json --report $W/served_$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"; grep -A6 "^line" $W/bench_$n.txt | cut -c1-250; grep "geomean" $W/bench_$n.txt
done
cat $W/grouped_train.txt $W/grouped_heldout.txt > $W/grouped.txt
timeout 100 .bundle/run opsched bench --suite $W/grouped.txt --records $L --model $R/model.opsm $B --baseline /tmp/g.json \
  --report $W/grouped > $W/bench_grouped.txt 2>&1; echo "bench grouped rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 150 python3 compare_torch.py --suite $W/grouped.txt --opsched $W/grouped/report.json \
   --json $W/compare_grouped.json --markdown $W/compare_grouped.md > $W/compare_grouped.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_grouped.txt
echo "done $(( $(date +%s) - T0 ))s"; save
