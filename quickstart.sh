#!/usr/bin/env bash
# opsched quick start, step 1: install what is missing, build, and run a real tuning run
# of bench/suites/quickstart.txt on the default target (the first GPU, else the CPU).
# Records go to .out/quickstart.log; then try:
#   bazel-bin/tools/opsched records best .out/quickstart.log
#   bazel-bin/tools/opsched explain --records .out/quickstart.log "<a line of the suite>"
set -euo pipefail
cd "$(dirname "$0")"
tools/setup.sh
bazel build //tools:opsched
mkdir -p .out
bazel-bin/tools/opsched tune --suite bench/suites/quickstart.txt --records .out/quickstart.log \
  --policy xgb --trials 24 "$@"
