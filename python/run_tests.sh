#!/usr/bin/env bash
# Runs the Python package's tests against the library given (bazel test //python:python_test;
# the bundle's run_python_tests): run_tests.sh LIBRARY [UNITTEST ARGS...].
# A library built with --config=asan needs the sanitizer runtimes loaded before Python
# itself; the interpreter's own allocations are left out of leak checking.
set -euo pipefail
lib="$(realpath "$1")"
cd "$(dirname "$0")"
export OPSCHED_LIBRARY="$lib"
asan=$(ldd "$lib" | awk '/libasan\.so/ {print $3}')
if [ -n "$asan" ]; then
  ubsan=$(ldd "$lib" | awk '/libubsan\.so/ {print $3}')
  export LD_PRELOAD="$asan${ubsan:+ $ubsan}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  export PYTHONMALLOC=malloc
  echo "run_tests: sanitized library; preloading $LD_PRELOAD"
fi
python3 -c 'import numpy' 2>/dev/null || { echo "run_tests: numpy is missing (tools/setup.sh installs it)" >&2; exit 1; }
exec python3 -m unittest discover -s tests -p 'test_*.py' -v "${@:2}"
