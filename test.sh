#!/usr/bin/env bash
# opsched quick start, step 2: build everything (GPU code too when a CUDA toolkit is
# present) and run every test. GPU tests skip, saying why, when there is no GPU.
set -euo pipefail
cd "$(dirname "$0")"
tools/setup.sh
status=0
# Folder dependencies point one way (docs/ARCHITECTURE.md, "Layers").
python3 tools/check_layers.py || status=$?
bazel test //... "$@" || status=$?
# Say which tests skipped and why (gtest prints the reason into each test log).
logs=$(bazel info bazel-testlogs 2>/dev/null)
skipped=$(grep -h "^\[  SKIPPED \] .*(" "$logs"/tests/*/test.log 2>/dev/null | wc -l || true)
if [ "$skipped" -gt 0 ]; then
  reason=$(grep -h -m1 "test skipped:" "$logs"/tests/*/test.log 2>/dev/null | sed -n 1p)
  echo "test.sh: $skipped GPU test cases skipped: ${reason:-no GPU}"
fi
# The Python package's torch tests skip without torch or a GPU (unittest prints why).
py_skipped=$(grep -h "\.\.\. skipped " "$logs"/python/*/test.log 2>/dev/null | wc -l || true)
if [ "$py_skipped" -gt 0 ]; then
  reason=$(grep -h -m1 -o "skipped .*" "$logs"/python/*/test.log 2>/dev/null | sed -n 1p)
  echo "test.sh: $py_skipped Python test cases $reason"
fi
exit $status
