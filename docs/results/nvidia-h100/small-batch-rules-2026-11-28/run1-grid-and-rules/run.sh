#!/usr/bin/env bash
# run 1 (h39): the nchw staged depthwise default (strips of 2 or 1 rows where a block's threads would idle) and the
# specialised pointwise rule (16 bytes a tensor: 8 lanes of f16/bf16). (1) every staged config of the 7 new train
# lines (grid), then those lines tuned (xgb, 48 trials, the shipped logs as transfer); (2) rules alone (no records, no
# model), A/B against 61f7efa's build (prev), 2 rounds, ab_rule.txt; (3) compare_torch of the rules-alone report
# (new, round 2) and of held-out depthwise lines 20-23 served with the shipped records and model.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res1; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h39/*.txt $W/
H=.out/h39; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res1 && cd - > /dev/null; }
timeout 150 .bundle/run opsched tune --suite $H/new_train.txt --records $W/grid.log --policy grid --trials 400 \
  --implementations conv2d_cuda_depthwise_staged --no-progress --wide > $W/grid.txt 2>&1; echo "grid rc=$? $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched tune --suite $H/new_train.txt --records $W/tune.log --trials 48 \
  --transfer $R/conv.log $R/reduce.log $R/scatter.log $R/models.log --model $R/model.opsm --no-progress --wide > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; save
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 100 .bundle/run $bin bench --suite $H/ab_rule.txt $B --baseline /tmp/r$b$i.json --report /tmp/rr$b$i > $W/rule_${b}_$i.txt 2>&1
  done
  echo "round $i $(( $(date +%s) - T0 ))s"; save
done
timeout 60 .bundle/run opsched bench --suite $H/held_dw.txt --records $R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log \
  --model $R/model.opsm $B --baseline /tmp/hd.json --report /tmp/rhd > $W/held_dw_new.txt 2>&1
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/ab_rule.txt --opsched /tmp/rrnew2/report.json \
   --benchmark both --json $W/compare_rule.json --markdown $W/compare_rule.md > $W/compare_rule.txt 2>&1; echo "compare rc=$?")
(cd bench && timeout 60 python3 compare_torch.py --suite ../$H/held_dw.txt --opsched /tmp/rhd/report.json \
   --benchmark both --json $W/compare_held_dw.json --markdown $W/compare_held_dw.md > $W/compare_held_dw.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
grep -E "speedup" $W/compare_rule.txt $W/compare_held_dw.txt | tail -6
