#!/usr/bin/env bash
# Run 9: A/B of the batchnorm kernel, one group a step (the binary of run 8) against two
# groups a step loaded before the statistics (this one), same records, same GPU; then the
# final binary beside PyTorch eager and torch.compile.
set -uo pipefail
cd "$(dirname "$0")/../.."
T0=$(date +%s)
rm -rf .bundle .bundle_prev && mkdir -p .bundle .bundle_prev && tar xJf .out/g8/bundle.tar.xz -C .
tar xJf .out/g7/bundle.tar.xz -C .bundle_prev --strip-components=1
R=bench/records/nvidia-h100
G=.out/g8
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
timeout 200 .bundle/run_tests > $O/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^== .*(PASSED|FAILED)" $O/gpu-tests.txt
for round in 1 2; do
  for b in prev new; do
    dir=.bundle; [ $b = prev ] && dir=.bundle_prev
    timeout 120 $dir/run opsched bench --suite $G/ab.txt --records $R/pointwise.log --rounds 1 --min-time-ms 10 --wide \
      --report /tmp/rep_${b}_$round > $O/ab_${b}_$round.txt 2>&1; echo "bench $b $round exit $? $(( $(date +%s) - T0 ))s"
  done
done
for b in prev new; do echo "== $b"; for r in 1 2; do grep -E "^ +[0-9]+ +pointwise" $O/ab_${b}_$r.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {print $1, $i, $(i+2); break}}'; done; done
(cd bench && timeout 200 python3 compare_torch.py --suite ../$G/ab.txt --opsched /tmp/rep_new_2/report.json \
   --compile --benchmark both --json $O/compare.json --markdown $O/compare.md > $O/compare.txt 2>&1; echo "compare exit $?"; grep -E "torch.compile|geomean" $O/compare.txt)
echo "=== done $(( $(date +%s) - T0 ))s"
