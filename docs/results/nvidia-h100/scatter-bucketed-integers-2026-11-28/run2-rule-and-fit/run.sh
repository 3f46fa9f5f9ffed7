#!/usr/bin/env bash
# run 2 (h30): the bucketed rule and fit (targets spread over more than L2). scatter_test on the GPU; the rule's pick
# for the KV-cache train line measured (tune --trials 1 into an empty log); prev vs this build: model only (no records),
# rules only (no model, no records) over every tuned scatter line, and the held-out scatter lines with the shipped
# records and model (2 rounds), compare_torch on those.
set -uo pipefail
T0=$(date +%s); ROOT=$(pwd)
W=/tmp/res2; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h30/*.txt $W/
H=.out/h30; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res2 && cd - > /dev/null; }
timeout 200 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== |^\[  (PASSED|FAILED)|^\[  FAILED" $W/gpu-tests.txt; save
timeout 60 .bundle/run opsched tune --suite $H/kv.txt --records $W/kv.log --trials 1 --min-time-ms 10 --no-progress --wide > $W/kv_tune.txt 2>&1
echo "kv rc=$?"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
timeout 60 .bundle/run opsched_prev bench --suite $H/ab.txt --model $R/model.opsm $B --baseline /tmp/b1.json --report /tmp/r1 > $W/model_before.txt 2>&1
timeout 60 .bundle/run opsched bench --suite $H/ab.txt --model $R/model.opsm $B --baseline /tmp/b2.json --report /tmp/r2 > $W/model_after.txt 2>&1
timeout 90 .bundle/run opsched_prev bench --suite $H/rule.txt $B --baseline /tmp/b3.json --report /tmp/r3 > $W/rule_before.txt 2>&1
timeout 90 .bundle/run opsched bench --suite $H/rule.txt $B --baseline /tmp/b4.json --report /tmp/r4 > $W/rule_after.txt 2>&1
echo "model/rule $(( $(date +%s) - T0 ))s"; save
for i in 1 2; do
  timeout 60 .bundle/run opsched_prev bench --suite $H/heldout.txt --records $RECS --model $R/model.opsm $B --baseline /tmp/bh$i.json --report /tmp/rh$i > $W/held_before_$i.txt 2>&1
  timeout 60 .bundle/run opsched bench --suite $H/heldout.txt --records $RECS --model $R/model.opsm $B --baseline /tmp/bn$i.json --report /tmp/rn$i > $W/held_after_$i.txt 2>&1
done
echo "held $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/heldout.txt --opsched /tmp/rn2/report.json \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
cd $W && for f in model_before model_after rule_before rule_after held_before_1 held_after_1 held_before_2 held_after_2; do echo $f; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s:%s ", $1, substr($i,14), $(i+2); break}}'; echo; done
grep -E "speedup" compare.txt | tail -3
