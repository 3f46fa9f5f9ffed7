#!/usr/bin/env bash
# h117 (H200): the selector model refitted on every shipped H100 and H200 log (held-out suites left out; it now
# knows the grouped configs' `filters` and scatter_cuda_columns) against the shipped one: the held-out models file
# and the held-out pointwise file from the shipped logs with each model, A B A B; PyTorch beside both on the models file.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h117; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  for m in old:$R/model.opsm new:$H/model_new.opsm; do
    n=${m%%:*}; f=${m#*:}
    for s in heldout:$PWD/bench/suites/models/heldout.txt pointwise_heldout:$PWD/bench/suites/pointwise_heldout.txt; do
      sn=${s%%:*}; sf=${s#*:}
      timeout 100 .bundle/run opsched bench --suite $sf --records $L --model $f $B --baseline /tmp/${n}_$sn$i.json \
        --report $W/${n}_${sn}_$i > $W/bench_${n}_${sn}_$i.txt 2>&1
      echo "bench $n $sn $i rc=$? $(( $(date +%s) - T0 ))s"
    done
  done
  save
done
for n in old new; do
  (cd bench && timeout 150 python3 compare_torch.py --suite $PWD/suites/models/heldout.txt --opsched $W/${n}_heldout_2/report.json \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
