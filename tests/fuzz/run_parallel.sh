#!/usr/bin/env bash
# Runs the 10^7-execution campaign spread over many cores (docs/build.md, "Fuzzing"):
#
#   tests/fuzz/run_parallel.sh BIN CORPUS FINDINGS SECONDS TARGET:PROCS:RUNS ...
#
# BIN holds the fuzzers that tests/fuzz/build_fuzzers.sh built (they need their shared
# libraries on LD_LIBRARY_PATH on another machine). Per TARGET it starts PROCS libFuzzer
# processes with distinct seeds over one working corpus CORPUS/TARGET (libFuzzer reloads
# what the others found) plus the seed corpus, RUNS executions in all, each stopping
# after SECONDS at the latest; findings land in FINDINGS/TARGET. Prints the executions
# each target ran (the sum over its processes) and its findings; exits 1 on a finding.
# A campaign cut short by SECONDS is continued by running again with the remainder.
set -uo pipefail
[ $# -ge 5 ] || { sed -n '2,13p' "$0"; exit 2; }
bin=$1 corpus=$2 findings=$3 secs=$4; shift 4
cd "$(dirname "$0")/../.."
logs=$(mktemp -d)
for spec in "$@"; do
  IFS=: read -r t procs runs <<<"$spec"
  mkdir -p "$corpus/$t" "$findings/$t" "$logs/$t"
  dict=(); [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  for i in $(seq 1 "$procs"); do
    "$bin/${t}_fuzzer" -runs=$(( (runs + procs - 1) / procs )) -max_total_time="$secs" \
      -seed=$(( 7919 * i + ${#t} )) "${dict[@]}" -print_final_stats=1 -timeout=30 \
      -rss_limit_mb=4096 -artifact_prefix="$findings/$t/" "$corpus/$t" "tests/fuzz/corpus/$t" \
      > "$logs/$t/$i.log" 2>&1 &
  done
done
wait
status=0
for spec in "$@"; do
  IFS=: read -r t procs runs <<<"$spec"
  total=0
  for i in $(seq 1 "$procs"); do
    n=$(grep -a "stat::number_of_executed_units" "$logs/$t/$i.log" | awk '{print $2}' | tail -1)
    total=$(( total + ${n:-0} ))
  done
  found=$(find "$findings/$t" -type f | wc -l)
  echo "fuzz: $t $total executions in $procs processes, $found finding(s) in $findings/$t"
  if [ "$found" -gt 0 ]; then
    status=1
    grep -a -h -E "ERROR: |SUMMARY: |runtime error|fuzz check failed" "$logs/$t"/*.log | sed -n 1,5p
  fi
done
rm -rf "$logs"
exit $status
