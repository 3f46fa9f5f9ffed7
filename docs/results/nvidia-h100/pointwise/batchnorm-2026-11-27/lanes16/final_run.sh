#!/usr/bin/env bash
# Run 13: the final build (16 lanes of f16 over NCHW runs, 8 channels-last): GPU tests and the f16 chains.
set -uo pipefail
cd "$(dirname "$0")/../.."
rm -rf .bundle && mkdir -p .bundle && tar xJf .out/g11/bundle.tar.xz -C .
O=$OUT
timeout 200 .bundle/run_tests > $O/gpu-tests.txt 2>&1; echo "tests exit $?"; grep -E "^== .*(PASSED|FAILED)" $O/gpu-tests.txt
timeout 60 .bundle/run opsched bench --suite .out/g11/f16.txt --records bench/records/nvidia-h100/pointwise.log --rounds 1 \
  --min-time-ms 10 --wide > $O/f16_final.txt 2>&1
grep -E "^ +[0-9]+ +pointwise" $O/f16_final.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {print $1, $i, $(i+1), $(i+2); break}}'
