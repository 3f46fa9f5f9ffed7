#!/usr/bin/env bash
# h103 (H200): the final code and shipped records (h101's binary; records as committed): the held-out models file
# (26 lines never tuned; the shipped logs and model) and the held-out pointwise file (22 chains never tuned; the
# shipped logs, as h95), each beside PyTorch (the pointwise file also beside torch.compile).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h103; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
grep -hv '^#' bench/suites/pointwise_heldout.txt | grep . > $W/pointwise_heldout.txt
for s in models_heldout:$PWD/bench/suites/models/heldout.txt pointwise_heldout:$W/pointwise_heldout.txt; do
  n=${s%%:*}; f=${s#*:}; C=""; M="--model $R/model.opsm"; [ $n = pointwise_heldout ] && C="--compile" && M=""
  timeout 150 .bundle/run opsched bench --suite $f --records $L $M $B --baseline /tmp/$n.json \
    --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 590 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $f --opsched $W/$n/report.json $C \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
