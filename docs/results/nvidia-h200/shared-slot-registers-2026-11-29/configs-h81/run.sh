#!/usr/bin/env bash
# h81 (H200): the 8-op chain (pointwise.txt line 14) at configs the tuner did not reach with the 48/40-register
# build (101d58c): each served from a log holding one record of that config (imported with a placeholder time,
# so bench serves it and measures it afresh). Names: v_<lanes>_<block>_<items>. Round-robin, twice while time lasts.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h81; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
B="--rounds 1 --min-time-ms 5 --no-progress --wide --update-baseline"
for k in 1 2; do for l in $H/v_*.log; do
  [ $(( $(date +%s) - T0 )) -gt 230 ] && break 2
  n=$(basename $l .log)
  timeout 60 .bundle/run opsched bench --suite $H/chain8.txt --records $l $B --baseline /tmp/$n$k.json --report $W/${n}_$k > $W/bench_${n}_$k.txt 2>&1
  echo "$n $k rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^ *[0-9]+  pointwise' $W/bench_${n}_$k.txt | awk '{printf "%s %s", $(NF-12), $(NF-10)}')"
done; save; done
echo "done $(( $(date +%s) - T0 ))s"; save
