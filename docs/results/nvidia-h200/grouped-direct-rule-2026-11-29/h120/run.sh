#!/usr/bin/env bash
# h120 (H200): three f32 grouped train lines (8 and 16 filters a group; train.txt) tuned with the direct-kernel rule
# for f32 grouped layers of 8 or more filters a group and the records' contest of a prediction
# (strategies/records_contest.cc); then, with their records beside the shipped logs and model: the grouped held-out
# lines against h118's reference tuning of them (never shipped, never fitted on); the grouped lines and the held-out
# models file beside PyTorch; the held-out pointwise file's decisions (no PyTorch).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h120; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $H/*.log $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
timeout 150 .bundle/run opsched tune --suite $W/new_train.txt --records $W/new.log --trials 48 --transfer $L \
  --model $R/model.opsm --no-progress --wide > $W/tune_new.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; grep -A4 "^line" $W/tune_new.txt | cut -c1-260; save
L2="$L $W/new.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 100 .bundle/run opsched bench --suite $W/grouped_heldout.txt --records $L2 --model $R/model.opsm \
  --reference $W/reference.log $B --baseline /tmp/r.json --report $W/served_ref > $W/bench_ref.txt 2>&1
echo "bench ref rc=$? $(( $(date +%s) - T0 ))s"; grep -A6 "^line" $W/bench_ref.txt | cut -c1-260; grep "geomean" $W/bench_ref.txt
while read -r wl; do .bundle/run opsched explain --records $L2 --model $R/model.opsm "$wl" 2>&1 | head -40; echo; done \
  < $W/grouped_heldout.txt > $W/explain_heldout_grouped.txt
cat $W/grouped_train.txt $W/grouped_heldout.txt > $W/grouped.txt
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for s in grouped:$W/grouped.txt heldout:$PWD/bench/suites/models/heldout.txt; do
  IFS=: read -r n f <<< "$s"
  timeout 100 .bundle/run opsched bench --suite $f --records $L2 --model $R/model.opsm $B --baseline /tmp/$n.json \
    --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  (cd bench && timeout 200 python3 compare_torch.py --suite $f --opsched $W/$n/report.json \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup" $W/compare_$n.txt; save
done
timeout 100 .bundle/run opsched bench --suite $PWD/bench/suites/pointwise_heldout.txt --records $L2 --model $R/model.opsm \
  $B --baseline /tmp/p.json --report $W/pointwise > $W/bench_pointwise.txt 2>&1
echo "bench pointwise rc=$? $(( $(date +%s) - T0 ))s"
echo "done $(( $(date +%s) - T0 ))s"; save
