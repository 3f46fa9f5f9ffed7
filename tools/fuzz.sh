#!/usr/bin/env bash
# Fuzzing opsched's parsers of untrusted input with libFuzzer (docs/build.md, "Fuzzing").
#
#   tools/fuzz.sh [--runs N | --seconds S] [TARGET ...]
#
# Builds the targets (tests/fuzz/build_fuzzers.sh: clang-14, ASan + UBSan) and runs each
# one after the other (one core each): workload (the workload text parser, suites,
# canonicalisation, explain), records_log (the log reader and database loader),
# json_import (records import's JSON) and baseline (bench's baseline JSON). The default
# is the documented campaign of 10^7 executions per target; CI runs --seconds 45.
# Working corpora grow in .fuzz/corpus/TARGET (seeded from tests/fuzz/corpus/TARGET);
# findings (crashes, leaks, timeouts, failed properties) are written to
# .fuzz/findings/TARGET/. Prints executions and findings per target; exits 1 when any
# target found something. Reproduce a finding: .fuzz/build/TARGET_fuzzer FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-runs=10000000)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) limit=(-runs="$2"); shift 2 ;;
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(workload records_log json_import baseline)
tests/fuzz/build_fuzzers.sh .fuzz/build
status=0
summary=()
for t in "${targets[@]}"; do
  corpus=".fuzz/corpus/$t"
  findings=".fuzz/findings/$t"
  mkdir -p "$corpus" "$findings"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  log=".fuzz/$t.log"
  start=$(date +%s)
  set +e
  ".fuzz/build/${t}_fuzzer" "${limit[@]}" "${dict[@]}" -print_final_stats=1 -timeout=30 \
    -rss_limit_mb=4096 -artifact_prefix="$findings/" "$corpus" "tests/fuzz/corpus/$t" > "$log" 2>&1
  code=$?
  set -e
  runs=$(grep -a "stat::number_of_executed_units" "$log" | awk '{print $2}' | tail -1)
  found=$(find "$findings" -type f | wc -l)
  line=$(printf "%-12s %12s executions in %5d s, exit %d, %d finding(s) in %s" \
         "$t" "${runs:-?}" $(( $(date +%s) - start )) "$code" "$found" "$findings")
  echo "fuzz: $line"
  summary+=("$line")
  if [ "$code" -ne 0 ] || [ "$found" -gt 0 ]; then
    status=1
    grep -a -E "fuzz check failed|ERROR: |SUMMARY: |runtime error" "$log" | head -5 || true
  fi
done
printf 'fuzz summary:\n'
printf '  %s\n' "${summary[@]}"
exit $status
