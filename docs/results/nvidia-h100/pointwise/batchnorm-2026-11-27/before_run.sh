#!/usr/bin/env bash
# Run 5: profile the pointwise BN chains (ncu) beside a reference chain at 94% of copy.
set -uo pipefail
cd "$(dirname "$0")/../.."
T0=$(date +%s)
rm -rf .bundle && mkdir -p .bundle && tar xJf .out/g4/bundle.tar.xz -C .
R=bench/records/nvidia-h100
O=$OUT
cat .out/g4/l_*.txt > /tmp/all.txt
true || timeout 120 .bundle/run opsched bench --suite /tmp/all.txt --records $R/pointwise.log --model $R/model.opsm --rounds 2 --min-time-ms 10 --wide > $O/bench.txt 2>&1
echo "bench exit $? $(( $(date +%s) - T0 ))s"; cat $O/bench.txt | cut -c1-220
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
for f in .out/g4/l_*.txt; do
  b=$(basename $f .txt)
  LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64 timeout 100 $NCU --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats -k regex:'Kernel|Pass' -c 4 \
    .bundle/bin/opsched bench --suite $f --records $R/pointwise.log --model $R/model.opsm --rounds 1 --min-time-ms 1 > $O/ncu_$b.txt 2>&1 || echo "ncu $b failed"
  echo "== $b"; grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Block Size|Grid Size|Theoretical Occ|Warp Cycles Per Issued" $O/ncu_$b.txt | head -40
done
echo "=== done $(( $(date +%s) - T0 ))s"
