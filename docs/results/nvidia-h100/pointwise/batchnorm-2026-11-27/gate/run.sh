#!/usr/bin/env bash
# Run 8: squeeze-excite gates x*sigmoid(s) through the batchnorm
# implementations: GPU tests, a reference tuning (never served), served beside PyTorch.
set -uo pipefail
cd "$(dirname "$0")/../.."
T0=$(date +%s)
rm -rf .bundle && mkdir -p .bundle && tar xJf .out/g7/bundle.tar.xz -C .
R=bench/records/nvidia-h100
G=.out/g7
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
timeout 240 .bundle/run_tests > $O/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^== |^\[  (PASSED|FAILED) |^\[  FAILED" $O/gpu-tests.txt | head -20
echo "=== reference $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched tune --suite $G/gate.txt --records $O/pointwise_heldout_gate_reference.log --policy xgb --trials 24 \
  --implementations pointwise_cuda_interpreted pointwise_cuda_hoisted pointwise_cuda_batchnorm --no-progress --wide > $O/reference.txt 2>&1
echo "ref exit $?"; grep -v "^\[" $O/reference.txt | cut -c1-40,150-330 | tail -5
echo "=== bench $(( $(date +%s) - T0 ))s"
timeout 150 .bundle/run opsched bench --suite $G/gate.txt --records $R/pointwise.log \
  --reference $O/pointwise_heldout_gate_reference.log \
  --rounds 2 --min-time-ms 10 --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $O/bench.txt 2>&1
echo "bench exit $? $(( $(date +%s) - T0 ))s"; grep -v "^\[" $O/bench.txt | cut -c1-50,160-400 | head -8
(cd bench && timeout 200 python3 compare_torch.py --suite ../$G/gate.txt --opsched /tmp/rep/report.json \
   --compile --benchmark both --json $O/compare.json --markdown $O/compare.md > $O/compare.txt 2>&1; echo "compare exit $?"; grep -E "torch.compile|geomean" $O/compare.txt)
echo "=== done $(( $(date +%s) - T0 ))s"
