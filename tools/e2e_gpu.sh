#!/usr/bin/env bash
# On a GPU host, from the repository root with the bundle unpacked (.bundle, tools/bundle.sh):
# the Python package's tests with torch on the GPU, the C API and Runtime tests, and the
# end-to-end example of docs/examples/torch_model (untuned run recording its workloads,
# tuning, tuned run) and bench/python_call_cost.py. Results go to OUT (default: $OUT, else /tmp/opsched-e2e).
#
#   tools/e2e_gpu.sh [OUT] [TUNE ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-/tmp/opsched-e2e}}"
shift || true
mkdir -p "$out"
bundle="$PWD/.bundle"
[ -x "$bundle/run" ] || { echo "e2e_gpu: no bundle at $bundle (tools/bundle.sh)" >&2; exit 2; }
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export OPSCHED_LIBRARY="$bundle/lib/libopsched.so"
export PYTHONPATH="$bundle/python"
status=0
step() {
  local name="$1"; shift
  echo "=== $name: $*"
  if "$@" > "$out/$name.txt" 2>&1; then echo "=== $name: ok"; else echo "=== $name: FAILED ($?)"; status=1; fi
  tail -n 25 "$out/$name.txt"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
step python_tests "$bundle/run_python_tests"
step c_api_test "$bundle/run" c_api_test
step runtime_test "$bundle/run" runtime_test
step example env OPSCHED_CLI="$bundle/bin/opsched" docs/examples/torch_model/run.sh "$out/example" "$@"
# The host cost of a call, with the example's records (tuned with torch's libraries).
step call_cost python3 bench/python_call_cost.py --records "$out/example/records.log" --json "$out/call_cost.json"
exit $status
