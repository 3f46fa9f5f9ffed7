#!/usr/bin/env bash
# Run 11: the two squeeze-excite gates served by the binary before the batchnorm
# implementations (the interpreter, by its rule) and by the gate build (batchnorm), interleaved.
set -uo pipefail
cd "$(dirname "$0")/../.."
rm -rf .bundle .bundle_prev && mkdir -p .bundle .bundle_prev && tar xJf .out/g7/bundle.tar.xz -C .
tar xJf .out/g4/bundle.tar.xz -C .bundle_prev --strip-components=1
O=$OUT
for round in 1 2; do
  for b in before gate; do
    dir=.bundle; [ $b = before ] && dir=.bundle_prev
    log=bench/records/nvidia-h100/pointwise.log; [ $b = before ] && log=.out/g9/pointwise_old.log
    timeout 60 $dir/run opsched bench --suite .out/g7/gate.txt --records $log --rounds 1 \
      --min-time-ms 10 --wide > $O/se_${b}_$round.txt 2>&1
    grep -E "^ +[0-9]+ +pointwise" $O/se_${b}_$round.txt | awk -v b=$b '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {print b, $1, $i, $(i+1), $(i+2); break}}'
  done
done
