#!/usr/bin/env bash
# run 10 (h24): review change, a thread records only its first bad position (RecordFirstBad): scatter_test and graph_capture_test on the GPU.
set -uo pipefail
tar xJf .out/h24/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 .bundle/run_tests > $OUT/gpu-tests.txt 2>&1; echo "tests rc=$?"
grep -E "^== |^\[  (PASSED|FAILED)" $OUT/gpu-tests.txt
