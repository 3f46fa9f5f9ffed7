#!/usr/bin/env bash
# run 8 (h36): the bucketed rule's config bucket_bits=6 block=1024 windows=1 (was the knobs' defaults). A/B against
# b443f73's build (prev), 2 rounds: rules alone (no records, no model) over the 35 tuned scatter lines and the 4 held-out
# ones; the shipped records and model over the bucketed lines (ab.txt) and the held-out scatter lines; compare_torch on
# the held-out lines served by rules alone and with records and model.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res8; mkdir -p $W; cp "$0" $W/run.sh; cp .out/h36/*.txt $W/
H=.out/h36; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res8 && cd - > /dev/null; }
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 120 .bundle/run $bin bench --suite $H/rule_all.txt $B --baseline /tmp/r$b$i.json --report /tmp/rr$b$i > $W/rule_${b}_$i.txt 2>&1
    timeout 90 .bundle/run $bin bench --suite $H/ab.txt --records $RECS --model $R/model.opsm $B --baseline /tmp/a$b$i.json --report /tmp/ra$b$i > $W/ab_${b}_$i.txt 2>&1
    timeout 60 .bundle/run $bin bench --suite $H/heldout.txt --records $RECS --model $R/model.opsm $B --baseline /tmp/h$b$i.json --report /tmp/rh$b$i > $W/held_${b}_$i.txt 2>&1
  done
  echo "round $i $(( $(date +%s) - T0 ))s"; save
done
timeout 60 .bundle/run opsched bench --suite $H/heldout.txt $B --baseline /tmp/hr.json --report /tmp/rhr > $W/held_rule_new.txt 2>&1
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/heldout.txt --opsched /tmp/rhr/report.json \
   --benchmark both --json $W/compare_held_rules.json --markdown $W/compare_held_rules.md > $W/compare_held_rules.txt 2>&1; echo "compare rc=$?")
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/heldout.txt --opsched /tmp/rhnew2/report.json \
   --benchmark both --json $W/compare_held.json --markdown $W/compare_held.md > $W/compare_held.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
cd $W && for f in rule_prev_1 rule_new_1 rule_prev_2 rule_new_2 ab_prev_1 ab_new_1 ab_prev_2 ab_new_2 held_prev_1 held_new_1 held_prev_2 held_new_2 held_rule_new; do echo -n "$f: "; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s:%s ", $1, substr($i,14,4), $(i+2); break}}'; echo; done
grep -E "speedup" compare_held_rules.txt compare_held.txt | tail -3
