#!/usr/bin/env bash
# run 5: strips of two columns, the one-column loop order kept; GPU tests; exhaustive tuning of the
# staged kernel on the train depthwise lines (shipped) and the held-out ones (reference only);
# A/B bench of the depthwise lines; PyTorch beside them
set -x
W=/tmp/res; mkdir -p $W
H=.out/h5
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv
R=bench/records/nvidia-h100
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
.bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$?"; grep -E "== |PASSED|FAILED" $W/gpu-tests.txt | tail -6
T="--implementations conv2d_cuda_depthwise_staged --policy grid --trials 100 --no-progress --wide"
.bundle/run opsched tune --suite $H/dw_train.txt --records $W/dw_train.log $T > $W/tune_dw_train.txt 2>&1; echo tune rc=$?
.bundle/run opsched tune --suite $H/dw_heldout.txt --records $W/dw_heldout_reference.log $T > $W/tune_dw_heldout_reference.txt 2>&1; echo tune rc=$?
tail -16 $W/tune_dw_train.txt | cut -c1-230
for i in 1 2; do
  .bundle/run opsched_prev bench --suite $H/dw.txt --records $RECS --model $R/model.opsm --rounds 3 --min-time-ms 20 --no-progress --wide --update-baseline --baseline /tmp/bl_p.json --report /tmp/rep_p > $W/bench_prev_$i.txt 2>&1
  .bundle/run opsched bench --suite $H/dw.txt --records $RECS $W/dw_train.log --model $R/model.opsm --rounds 3 --min-time-ms 20 --no-progress --wide --update-baseline --baseline /tmp/bl_n.json --report $W/rep_new_$i > $W/bench_new_$i.txt 2>&1
done
cd bench && python3 compare_torch.py --suite ../$H/dw.txt --opsched $W/rep_new_2/report.json --benchmark both --json $W/dw_vs_torch.json --markdown $W/dw_vs_torch.md > $W/compare.txt 2>&1; echo compare rc=$?
cd /tmp && tar czf $OUT/results.tar.gz res && cp res/dw_train.log res/dw_heldout_reference.log $OUT/
