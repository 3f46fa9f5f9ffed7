#!/usr/bin/env bash
# The end-to-end loop of docs/examples/torch_model/README.md on a CUDA GPU:
#   1. train with opsched untuned, OPSCHED_RECORD_UNTUNED collecting the workloads served;
#   2. opsched tune --suite on that file;
#   3. train again with the records (OPSCHED_RECORDS).
# Each run checks opsched's outputs and gradients against pure PyTorch and times both.
#
#   run.sh [WORK_DIR] [TUNE ARGS...]     (default /tmp/opsched-torch-example)
# OPSCHED_CLI: how to run the opsched CLI (default: bazel-bin/tools/opsched, else opsched);
# the Python package is found on PYTHONPATH (default: this checkout's python/) and
# libopsched.so as docs/python.md says (OPSCHED_LIBRARY).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
work="${1:-/tmp/opsched-torch-example}"
shift || true
tune_args=("$@")
[ ${#tune_args[@]} -gt 0 ] || tune_args=(--trials 16)
if [ -z "${OPSCHED_CLI:-}" ]; then
  if [ -x "$repo/bazel-bin/tools/opsched" ]; then OPSCHED_CLI="$repo/bazel-bin/tools/opsched"; else OPSCHED_CLI=opsched; fi
fi
export PYTHONPATH="${PYTHONPATH:-$repo/python}"
mkdir -p "$work"
rm -f "$work/untuned.txt" "$work/records.log"

echo "== 1. untuned, recording the workloads served into $work/untuned.txt"
OPSCHED_RECORD_UNTUNED="$work/untuned.txt" python3 "$here/model.py" --label untuned --json "$work/untuned.json"
echo "== $(grep -vc '^#' "$work/untuned.txt") workloads recorded:"
grep -v '^#' "$work/untuned.txt"

# Records are for the library versions measured: torch loads its own cuDNN and cuBLAS, so
# the tuner runs with those first on the library path (docs/python.md).
vendor="$(python3 -m opsched.vendor_libs)"
echo "== 2. tuning them with torch's vendor libraries ($vendor):"
echo "   $OPSCHED_CLI tune --suite $work/untuned.txt --records $work/records.log ${tune_args[*]}"
start=$(date +%s)
LD_LIBRARY_PATH="$vendor${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  $OPSCHED_CLI tune --suite "$work/untuned.txt" --records "$work/records.log" --no-progress "${tune_args[@]}"
echo "== tuning took $(( $(date +%s) - start )) s"

echo "== 3. tuned, with the records"
OPSCHED_RECORDS="$work/records.log" OPSCHED_RECORD_UNTUNED="$work/still_untuned.txt" \
  python3 "$here/model.py" --label tuned --json "$work/tuned.json"
left=$(grep -vc '^#' "$work/still_untuned.txt" || true)
echo "== workloads still served without an exact record: $left"
