#!/usr/bin/env bash
# run 6 (final build): GPU tests; A/B of the depthwise lines (build before with the records
# before, this build with the re-tuned records); the dtype suite and the held-out file
# beside PyTorch
set -x
W=/tmp/res; mkdir -p $W
H=.out/h6
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv
R=bench/records/nvidia-h100
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
OLD="$R/conv.log $R/reduce.log $R/scatter.log $H/oldrec/models.log $H/oldrec/dtypes.log $R/pointwise.log"
.bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$?"; grep -E "== " $W/gpu-tests.txt | tail -6
B="--model $R/model.opsm --rounds 3 --min-time-ms 20 --no-progress --wide --update-baseline"
for i in 1 2; do
  .bundle/run opsched_prev bench --suite $H/dw.txt --records $OLD $B --baseline /tmp/bl_p.json --report /tmp/rep_p > $W/bench_dw_prev_$i.txt 2>&1
  .bundle/run opsched bench --suite $H/dw.txt --records $RECS $B --baseline /tmp/bl_n.json --report /tmp/rep_n > $W/bench_dw_new_$i.txt 2>&1
done
.bundle/run opsched bench --suite bench/suites/dtypes.txt --records $RECS --model $R/model.opsm --rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline --baseline /tmp/bl_d.json --report $W/rep_dtypes > $W/bench_dtypes.txt 2>&1; echo bench rc=$?
.bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $RECS --model $R/model.opsm --reference bench/reference/nvidia-h100/heldout.log --rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline --baseline /tmp/bl_h.json --report $W/rep_held > $W/bench_held.txt 2>&1; echo bench rc=$?
cd bench
python3 compare_torch.py --suite suites/dtypes.txt --opsched $W/rep_dtypes/report.json --json $W/dtypes_vs_torch.json --markdown $W/dtypes_vs_torch.md > $W/compare_dtypes.txt 2>&1; echo compare rc=$?
python3 compare_torch.py --suite suites/models/heldout.txt --opsched $W/rep_held/report.json --benchmark both --json $W/held_vs_torch.json --markdown $W/held_vs_torch.md > $W/compare_held.txt 2>&1; echo compare rc=$?
cd /tmp && tar czf $OUT/results.tar.gz res
