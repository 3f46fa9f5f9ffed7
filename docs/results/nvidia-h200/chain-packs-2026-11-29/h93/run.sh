#!/usr/bin/env bash
# h93 (H200): A/B of the chain kernels in one session: opsched_old (h89's build: per-group address tests
# and a run-time modulo) against opsched (packed accesses without the tests, FastDivmod), the specialised
# lines of the tuned pointwise suites, alternating twice; Nsight Compute on bias+GELU 64M f32 with each.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h93; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 20 --no-progress --wide"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . | sed -n '3p;5,8p;18p;20p;25p' > $W/chains.txt
for r in 1 2; do for b in opsched_old opsched; do
  timeout 60 .bundle/run $b bench --suite $W/chains.txt --records $L $B --baseline /tmp/x$r$b.json --update-baseline > $W/bench_${b}_$r.txt 2>&1
  echo "$b $r: $(grep -E '^ +[0-9]+  pointwise' $W/bench_${b}_$r.txt | awk '{printf "%s ", $(NF-10)}')"
done; done; save
sed -n 4p $W/chains.txt > $W/line8.txt
for b in opsched_old opsched; do
  timeout 120 ncu --kernel-name regex:ChainKernel --launch-skip 20 --launch-count 1 --section SpeedOfLight --section InstructionStats \
    --section Occupancy .bundle/run $b bench --suite $W/line8.txt --records $L --rounds 1 --min-time-ms 5 --no-progress > $W/ncu_$b.txt 2>&1
  echo "ncu $b: $(grep -E 'Duration|Executed Instructions  |DRAM Throughput|Registers Per' $W/ncu_$b.txt | awk '{printf "%s ", $NF}')"
done
echo "done $(( $(date +%s) - T0 ))s"; save
