#!/usr/bin/env bash
# h114 (H200): A/B of evict-first loads (ld.global.cs) of the copy's source and the parallel scatter's indices
# and updates. opsched = HEAD, opsched_b = the variant; each benches dtypes.txt's 14 scatter lines and scatter.txt
# from the shipped logs, A B A B; then PyTorch beside the variant on dtypes.txt's scatter lines.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h114; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 20 --no-progress --wide --update-baseline"
for i in 1 2; do
  for v in opsched opsched_b; do
    for s in dtypes_scatter scatter; do
      timeout 100 .bundle/run $v bench --suite $W/$s.txt --records $L $B --baseline /tmp/${v}_$s$i.json \
        --report $W/${v}_${s}_$i > $W/bench_${v}_${s}_$i.txt 2>&1
      echo "bench $v $s $i rc=$? $(( $(date +%s) - T0 ))s"
    done
  done
  save
done
(cd bench && timeout 200 python3 compare_torch.py --suite $W/dtypes_scatter.txt --opsched $W/opsched_b_dtypes_scatter_2/report.json \
   --json $W/compare_b.json --markdown $W/compare_b.md > $W/compare_b.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
grep -h "geomean speedup" $W/compare_b.txt
echo "done $(( $(date +%s) - T0 ))s"; save
