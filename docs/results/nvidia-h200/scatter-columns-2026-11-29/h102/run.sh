#!/usr/bin/env bash
# h102 (H200): the final code's GPU tests: scatter_test (with the column-privatized scatter and its tests) and
# pointwise_test (launch guards; several grid steps a thread), each on the GPU.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h102; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/device.txt
for t in scatter_test pointwise_test; do
  timeout 200 .bundle/run $t > $W/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - T0 ))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ')"
  grep -E "FAILED|Failure" -A4 $W/$t.txt | head -12; save
done
echo "done $(( $(date +%s) - T0 ))s"; save
