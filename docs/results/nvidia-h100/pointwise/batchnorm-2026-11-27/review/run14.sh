#!/usr/bin/env bash
# Run 14: after the review refactor (one fold of a channel's statistics shared by the CPU
# and GPU implementations): GPU tests, and four chains against the build before it, interleaved.
set -uo pipefail
cd "$(dirname "$0")/../.."
rm -rf .bundle .bundle_prev && mkdir -p .bundle .bundle_prev && tar xJf .out/g12/bundle.tar.xz -C .
tar xJf .out/g11/bundle.tar.xz -C .bundle_prev --strip-components=1
O=$OUT
timeout 200 .bundle/run_tests > $O/gpu-tests.txt 2>&1; echo "tests exit $?"; grep -E "^== .*(PASSED|FAILED)" $O/gpu-tests.txt
for round in 1 2; do
  for b in before after; do
    dir=.bundle; [ $b = before ] && dir=.bundle_prev
    timeout 60 $dir/run opsched bench --suite .out/g12/four.txt --records bench/records/nvidia-h100/pointwise.log --rounds 1 \
      --min-time-ms 10 --wide > $O/${b}_$round.txt 2>&1
    grep -E "^ +[0-9]+ +pointwise" $O/${b}_$round.txt | awk -v b=$b '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {print b, $1, $i, $(i+1), $(i+2); break}}'
  done
done
