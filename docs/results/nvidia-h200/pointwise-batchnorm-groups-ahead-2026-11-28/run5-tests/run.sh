#!/usr/bin/env bash
# h46: the GPU tests of the pointwise kernels at d56be04 (the final build of this session).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h46; cp $H/run.sh $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
mkdir -p /tmp/rf && ln -sfn "$PWD" /tmp/rf/opsched   # the runfiles root the suite-file test reads
for t in pointwise_batchnorm_test pointwise_hoist_test pointwise_accumulator_test pointwise_test; do
  TEST_SRCDIR=/tmp/rf timeout 120 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
done
(cd /tmp && tar czf $OUT/results.tar.gz res); echo "done $(( $(date +%s) - T0 ))s"
