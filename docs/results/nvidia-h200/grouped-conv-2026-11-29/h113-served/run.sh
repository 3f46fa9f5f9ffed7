#!/usr/bin/env bash
# h113 (H200): the final grouped code and rule, served as shipped: the grouped lines (5 tuned, 4 held-out never
# tuned) and dtypes.txt from the shipped logs alone (now holding the grouped records); the held-out models file
# from the shipped logs and model; each beside PyTorch.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h113; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
cat $W/grouped_train.txt $W/grouped_heldout.txt > $W/grouped.txt
for s in grouped:$W/grouped.txt:"$L" dtypes:$PWD/bench/suites/dtypes.txt:"$L" \
         heldout:$PWD/bench/suites/models/heldout.txt:"$L --model $R/model.opsm"; do
  IFS=: read -r n f logs <<< "$s"
  timeout 100 .bundle/run opsched bench --suite $f --records $logs $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 590 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $f --opsched $W/$n/report.json \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
