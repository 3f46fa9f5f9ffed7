#!/usr/bin/env bash
# h101 (H200): the column-privatized scatter-add (scatter_cuda_columns). scatter_test on the GPU; the 8 tuned
# lines it applies to (dtypes.txt line 9, scatter.txt, quickstart.txt, models/train.txt) tuned over its space
# alone (48 trials); served beside PyTorch with the held-out GCN CiteSeer line (never tuned); dtypes.txt in full.
# Then the tuned pointwise suites with the re-tuned pointwise records (h100's 8 fastest configs a line merged
# into the shipped log: pw_merged.log), beside PyTorch eager and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h101; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
timeout 200 .bundle/run scatter_test > $W/scatter_test.txt 2>&1
echo "scatter_test rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/scatter_test.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $W/scatter_test.txt | head -5; save
timeout 100 .bundle/run opsched tune --suite $W/cols_tune.txt --records $W/cols.log --trials 48 \
  --implementations scatter_cuda_columns --no-progress > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"; tail -12 $W/tune.txt; save
L="$R/conv.log $R/dtypes.log $R/models.log $H/pw_merged.log $R/reduce.log $R/scatter.log $W/cols.log"
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
grep -hv '^#' bench/suites/pointwise.txt bench/suites/pointwise_train.txt | grep . > $W/pointwise_tuned.txt
for s in cols:$W/cols_bench.txt dtypes:$PWD/bench/suites/dtypes.txt pointwise_tuned:$W/pointwise_tuned.txt; do
  n=${s%%:*}; f=${s#*:}; C=""; [ $n = pointwise_tuned ] && C="--compile"
  timeout 100 .bundle/run opsched bench --suite $f --records $L $B --baseline /tmp/$n.json --report $W/$n > $W/bench_$n.txt 2>&1
  echo "bench $n rc=$? $(( $(date +%s) - T0 ))s"
  left=$(( 590 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $f --opsched $W/$n/report.json $C \
     --json $W/compare_$n.json --markdown $W/compare_$n.md > $W/compare_$n.txt 2>&1; echo "compare $n rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_$n.txt; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
