#!/usr/bin/env bash
# h126 (H200): the whole conv2d_test on the GPU with the final conv2d kernels (h125's build: the two-channels-a-lane
# channels-last kernel; the final commits change a comment and a host test only).
set -uo pipefail
H=.out/h126; rm -rf .bundle; tar xJf $H/bundle.tar.xz -C .
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
TEST_SRCDIR=/tmp/rf timeout 560 .bundle/run conv2d_test > $OUT/conv2d_test.txt 2>&1
echo "conv2d_test rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED|tests ran" $OUT/conv2d_test.txt | head -20
