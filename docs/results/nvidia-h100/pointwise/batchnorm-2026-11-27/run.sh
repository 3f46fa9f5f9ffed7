#!/usr/bin/env bash
# Run 6: the batchnorm implementations on the GPU: tests, tuning of the train batch-norm
# chains, a reference tuning of the held-out ones (never served), then served beside
# PyTorch eager and torch.compile.
set -uo pipefail
cd "$(dirname "$0")/../.."
T0=$(date +%s)
rm -rf .bundle && mkdir -p .bundle && tar xJf .out/g5/bundle.tar.xz -C .
R=bench/records/nvidia-h100
G=.out/g5
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
timeout 240 .bundle/run_tests > $O/tests.txt 2>&1; echo "tests exit $?"
grep -E "^== |^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" $O/tests.txt | head -30
echo "=== tune train $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched tune --suite $G/train_bn.txt --records $O/pointwise_bn.log --transfer $R/pointwise.log \
  --trials 16 --no-progress --wide > $O/tune_train.txt 2>&1; echo "tune exit $?"; grep -v "^\[" $O/tune_train.txt | cut -c1-40,170-330 | tail -5
echo "=== reference of the held-out $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched tune --suite $G/heldout_bn.txt --records $O/pointwise_heldout_bn_reference.log --policy xgb --trials 24 \
  --implementations pointwise_cuda_interpreted pointwise_cuda_hoisted pointwise_cuda_batchnorm --no-progress --wide > $O/reference.txt 2>&1
echo "ref exit $?"; grep -v "^\[" $O/reference.txt | cut -c1-40,170-330 | tail -8
echo "=== bench $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched bench --suite $G/cmp.txt --records $R/pointwise.log $O/pointwise_bn.log \
  --reference $R/../../reference/nvidia-h100/pointwise_heldout.log $O/pointwise_heldout_bn_reference.log \
  --rounds 2 --min-time-ms 10 --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $O/bench.txt 2>&1
echo "bench exit $? $(( $(date +%s) - T0 ))s"; grep -v "^\[" $O/bench.txt | cut -c1-50,160-400 | head -14
(cd bench && timeout 240 python3 compare_torch.py --suite ../$G/cmp.txt --opsched /tmp/rep/report.json \
   --compile --benchmark both --json $O/compare.json --markdown $O/compare.md > $O/compare.txt 2>&1; echo "compare exit $?"; tail -4 $O/compare.txt)
echo "=== done $(( $(date +%s) - T0 ))s"
