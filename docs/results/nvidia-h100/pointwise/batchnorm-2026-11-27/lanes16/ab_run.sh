#!/usr/bin/env bash
# Run 12: f16 batch-norm chains at up to 8 lanes (the gate build) and up to 16 (32 bytes), interleaved; GPU tests.

set -uo pipefail
cd "$(dirname "$0")/../.."
rm -rf .bundle .bundle_prev && mkdir -p .bundle .bundle_prev && tar xJf .out/g10/bundle.tar.xz -C .
tar xJf .out/g7/bundle.tar.xz -C .bundle_prev --strip-components=1
O=$OUT
timeout 200 .bundle/run_tests > $O/gpu-tests.txt 2>&1; echo "tests exit $?"; grep -E "^== .*(PASSED|FAILED)" $O/gpu-tests.txt
for round in 1 2; do
  for b in v8 v16; do
    dir=.bundle; [ $b = v8 ] && dir=.bundle_prev
    log=bench/records/nvidia-h100/pointwise.log; [ $b = v8 ] && log=bench/records/nvidia-h100/pointwise.log
    timeout 60 $dir/run opsched bench --suite .out/g10/f16.txt --records $log --rounds 1 \
      --min-time-ms 10 --wide > $O/f16_${b}_$round.txt 2>&1
    grep -E "^ +[0-9]+ +pointwise" $O/f16_${b}_$round.txt | awk -v b=$b '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {print b, $1, $i, $(i+1), $(i+2); break}}'
  done
done
