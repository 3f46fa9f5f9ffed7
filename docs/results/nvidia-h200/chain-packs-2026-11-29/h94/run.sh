#!/usr/bin/env bash
# h94 (H200): pointwise_test on the GPU (with SpecialisedChainsServeMisalignedTensors); the chain lines of h93
# with opsched (packed accesses without address tests and FastDivmod for f16 and bf16 only; f32 as before),
# twice, to set beside h93 (opsched_old: h89's build, and the packed path for every type).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h94; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 1 --min-time-ms 20 --no-progress --wide"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 150 .bundle/run pointwise_test > $W/pointwise_test.txt 2>&1
echo "pointwise_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/pointwise_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $W/pointwise_test.txt | head -5
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . | sed -n '3p;5,8p;18p;20p;25p' > $W/chains.txt
for r in 1 2; do for b in opsched; do
  timeout 60 .bundle/run $b bench --suite $W/chains.txt --records $L $B --baseline /tmp/x$r$b.json --update-baseline > $W/bench_${b}_$r.txt 2>&1
  echo "$b $r: $(grep -E '^ +[0-9]+  pointwise' $W/bench_${b}_$r.txt | awk '{printf "%s ", $(NF-10)}')"
done; done; save
echo "done $(( $(date +%s) - T0 ))s"; save
