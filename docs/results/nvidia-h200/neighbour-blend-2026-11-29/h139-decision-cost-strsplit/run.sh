#!/usr/bin/env bash
# h139 (H200 host): dispatch_benchmark after its record paths are split with absl::StrSplit; the first predicted decision
# change (it parses the four nearest training workloads and builds their spaces), without and with record logs
# (the records' contest), and the cached decision; median of 3 repetitions.
set -uo pipefail
H=.out/h139; rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
R=bench/records/nvidia-h200
export OPSCHED_BENCH_MODEL=$R/model.opsm
export OPSCHED_BENCH_RECORDS=$R/conv.log:$R/dtypes.log:$R/models.log:$R/pointwise.log:$R/reduce.log:$R/scatter.log
timeout 300 .bundle/run dispatch_benchmark --benchmark_filter='Predicted' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | tee $OUT/dispatch_benchmark.txt
cp $H/run.sh $OUT/
