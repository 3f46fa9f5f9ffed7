#!/usr/bin/env bash
# h79 (H200): a: the shared-slot kernels at 40 registers for 16 lanes too (su_r40) against su_r (48 at 16
# lanes, 40 at 8; the Need order) on decide.txt and validate.txt, then pointwise.txt's 8-op chain with the
# held-out pointwise file served by su_r; b: that report beside PyTorch eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h79; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
if [ "$1" = a ]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
  for s in decide validate; do for b in su_r su_r40; do
    timeout 100 .bundle/run $b bench --suite $H/$s.txt --records $R/pointwise.log $B --baseline /tmp/$b$s.json --report $W/${s}_$b > $W/bench_${s}_$b.txt 2>&1
    echo "$s $b rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^ *[0-9]+  pointwise' $W/bench_${s}_$b.txt | awk '{printf "%s ", $(NF-10)}')"
  done; save; done
  sed -n 14p bench/suites/pointwise.txt > $W/chain8.txt; grep -v '^#' bench/suites/pointwise_heldout.txt >> $W/chain8.txt
  timeout 260 .bundle/run su_r bench --suite $W/chain8.txt --records $L $B --baseline /tmp/b3.json --report $W/pw > $W/bench_pointwise.txt 2>&1
  echo "bench pointwise rc=$? $(( $(date +%s) - T0 ))s"
else
  [ -f $W/pw/report.json ] || tar xzf $H/res_a.tar.gz -C /tmp
  left=$(( 570 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/chain8.txt --opsched $W/pw/report.json --compile \
     --json $W/compare_pointwise.json --markdown $W/compare_pointwise.md > $W/compare_pointwise.txt 2>&1; echo "compare pw rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_pointwise.txt
fi
echo "done $(( $(date +%s) - T0 ))s"; save
