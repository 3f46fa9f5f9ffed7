#!/usr/bin/env bash
# run 8 (h22, run_held.sh): issue 14's held-out models suite with the same final build,
# shipped records and model, the reference log for served/best, then compare_torch.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res8; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h22; R=bench/records/nvidia-h100
[ -x .bundle/bin/opsched ] || tar xJf $H/bundle.tar.xz -C .
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
timeout 300 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $RECS --model $R/model.opsm \
  --reference bench/reference/nvidia-h100/heldout.log --rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline \
  --baseline /tmp/bl_h.json --report $W/rep_held > $W/bench_held.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 240 python3 compare_torch.py --suite suites/models/heldout.txt --opsched $W/rep_held/report.json --benchmark both \
   --json $W/held_vs_torch.json --markdown $W/held_vs_torch.md > $W/compare_held.txt 2>&1; echo "compare rc=$?")
rm -rf $W/rep_held/*.svg
cd /tmp && tar czf $OUT/results.tar.gz res8
grep -E "served/best|holdout|geomean" $W/bench_held.txt | tail -4; grep -E "geomean|slowest" $W/compare_held.txt | tail -6
