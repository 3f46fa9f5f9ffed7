#!/usr/bin/env bash
# Everything measured on a GPU host, from a bundle (tools/bundle.sh): the tests, the
# dispatch micro-benchmark, a tuning run per suite, an exhaustive (grid) study run, the
# bench reports against the tuned records, and the PyTorch comparison.
#
#   bench/gpu_run.sh OUT SUITE... [-- STUDY_LINE]
#
# Results land in OUT (logs, records, reports). Each step has a time limit so that the
# whole run fits one lease; TRIALS, TUNE_BUDGET and SKIP_TESTS adjust it. With
# SEED_RECORDS=DIR, DIR/<suite>.log (earlier sessions on the same device) is where each
# tuning run resumes: what was measured there is not measured again.
set -uo pipefail
out="$1"; shift
suites=(); study=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then study="$2"; break; fi
  suites+=("$1"); shift
done
here="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$here/.bundle"
mkdir -p "$out"
# The bench judges against the baseline of this device kept in the repository (if any)
# and leaves the updated one in OUT/baseline.json.
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed -n 1p | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]/-/g')
[ -f "$here/bench/baselines/cuda-$device.json" ] && cp "$here/bench/baselines/cuda-$device.json" "$out/baseline.json"
run() { "$bundle/run" "$@"; }
step() { echo; echo "=== $*"; }

step device
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(), 'cudnn', torch.backends.cudnn.version())"

if [ -z "${SKIP_TESTS:-}" ]; then
  step tests
  timeout 300 "$bundle/run_tests" > "$out/tests.log" 2>&1
  echo "run_tests exit $?"
  grep -E "^== |^\[  (PASSED|FAILED) |Failure|checked runs|spin timed|target:" "$out/tests.log" | sed -n 1,60p
fi

step dispatch micro-benchmark
timeout 120 "$bundle/run" dispatch_benchmark --benchmark_min_time=0.2 2>&1 | tee "$out/dispatch_benchmark.txt" | tail -8

for suite in "${suites[@]}"; do
  name=$(basename "$suite" .txt)
  if [ -n "${SEED_RECORDS:-}" ] && [ -f "$SEED_RECORDS/$name.log" ]; then
    cp "$SEED_RECORDS/$name.log" "$out/$name.log"
  fi
  step "tune $name"
  timeout "${TUNE_TIMEOUT:-300}" "$bundle/run" opsched tune --suite "$here/$suite" --records "$out/$name.log" \
    --policy xgb --trials "${TRIALS:-24}" --time-budget "${TUNE_BUDGET:-240}" --no-progress \
    > "$out/tune_$name.txt" 2> "$out/tune_$name.err"
  echo "tune exit $?"; cat "$out/tune_$name.txt"
  step "bench $name"
  timeout 240 "$bundle/run" opsched bench --suite "$here/$suite" --records "$out/$name.log" \
    --baseline "$out/baseline.json" --update-baseline --report "$out/report_$name" \
    > "$out/bench_$name.txt" 2>&1
  echo "bench exit $?"; cat "$out/bench_$name.txt"
  step "compare with PyTorch: $name"
  (cd "$here/bench" && timeout 240 python3 compare_torch.py --suite "$here/$suite" \
      --opsched "$out/report_$name/report.json" --json "$out/compare_$name.json" \
      --markdown "$out/compare_$name.md" ${COMPARE_ARGS:-}) 2>&1 | tee "$out/compare_$name.txt"
done

if [ -n "$study" ]; then
  step "exhaustive study: $study"
  echo "$study" > "$out/study.txt"
  timeout 240 "$bundle/run" opsched tune --suite "$out/study.txt" --records "$out/study.log" --policy grid \
    --trials 100000 --no-progress > "$out/study_tune.txt" 2>&1
  echo "study exit $?"; tail -4 "$out/study_tune.txt"
fi
