#!/usr/bin/env bash
# opsched tune --mpi on the CPU with 3 ranks (rank 0 coordinates, ranks 1 and 2 tune):
#   1. every workload of the suite is in the log, no candidate twice, the log verifies;
#   2. the same command again resumes and measures nothing new;
#   3. a rank killed mid-run (mpirun --enable-recovery) has its workload re-queued, the
#      run finishes with the other rank, the summary names the dead rank, and the log is
#      still complete and free of duplicates.
# Skips, saying why, when mpirun is missing or the build has no MPI.
set -uo pipefail
opsched="$(realpath "$1")"; suite="$(realpath "$2")"
if ! command -v mpirun >/dev/null; then echo "mpirun not found, test skipped"; exit 0; fi
# Under ASan: Open MPI's own allocations outlive MPI_Finalize; suppress those (and only
# those) with a full unwind, since the fast unwinder stops inside its components.
if [ -n "${ASAN_OPTIONS:-}" ]; then
  supp="$(realpath "$3")"
  export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
  export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp:print_suppressions=0"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpi=(mpirun --allow-run-as-root --oversubscribe -np 3)
tune=(tune --mpi --target cpu --suite "$suite" --policy random --no-progress)

check_log() {  # LOG TRIALS: every workload has TRIALS distinct records, none twice
  "$opsched" records verify "$1" >/dev/null || { echo "FAIL: $1 does not verify"; return 1; }
  "$opsched" records export "$1" > "$out/export.jsonl" || return 1
  python3 - "$out/export.jsonl" "$suite" "$2" "$opsched" <<'PY'
import collections, json, subprocess, sys
export, suite, trials, opsched = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
records = [json.loads(l) for l in open(export) if l.strip()]
keys = collections.Counter((r["workload"]["key"], r["implementation"], json.dumps(r.get("config", {}), sort_keys=True))
                           for r in records)
dupes = [k for k, n in keys.items() if n > 1]
assert not dupes, f"candidates measured twice: {dupes[:3]}"
per_workload = collections.Counter(r["workload"]["key"] for r in records)
lines = [l.split("#")[0].strip() for l in open(suite)]
lines = [l for l in lines if l]
assert len(per_workload) == len(lines), f"{len(per_workload)} workloads in the log, {len(lines)} in the suite"
planned = {}
for r in records:
    planned[r["workload"]["key"]] = max(planned.get(r["workload"]["key"], 0),
                                        r.get("provenance", {}).get("planned_trials", 0))
short = {k: (n, planned[k]) for k, n in per_workload.items() if n < min(trials, planned[k]) or planned[k] == 0}
assert not short, f"workloads whose search did not finish (records, planned): {short}"
print(f"log ok: {len(records)} records, {len(per_workload)} workloads, no duplicates")
PY
}

if ! "$opsched" tune --mpi --help >/dev/null 2>&1; then echo "FAIL: no tune --mpi"; exit 1; fi

echo "== 1. three ranks"
"${mpi[@]}" "$opsched" "${tune[@]}" --records "$out/a.log" --trials 4 --min-time-ms 2 > "$out/a.txt" 2> "$out/a.err"
code=$?
cat "$out/a.txt"
if grep -q "no MPI support" "$out/a.err"; then echo "this build has no MPI support, test skipped"; exit 0; fi
[ $code -eq 0 ] || { echo "FAIL: exit $code"; cat "$out/a.err"; exit 1; }
grep -q "^rank 1: " "$out/a.txt" && grep -q "^rank 2: " "$out/a.txt" || { echo "FAIL: no per-rank summary"; exit 1; }
check_log "$out/a.log" 4 || exit 1

echo "== 2. resume"
"${mpi[@]}" "$opsched" "${tune[@]}" --records "$out/a.log" --trials 4 --min-time-ms 2 > "$out/b.txt" 2> "$out/b.err" ||
  { echo "FAIL: resume exit $?"; cat "$out/b.err"; exit 1; }
grep -q ": 0 candidates measured" "$out/b.txt" || { echo "FAIL: the resumed run measured again"; cat "$out/b.txt"; exit 1; }
check_log "$out/a.log" 4 || exit 1

echo "== 3. a rank dies"
"${mpi[@]}" --enable-recovery "$opsched" "${tune[@]}" --records "$out/c.log" --trials 12 --min-time-ms 30 \
  --heartbeat-timeout 3 > "$out/c.txt" 2> "$out/c.err" &
job=$!
victim=""
for _ in $(seq 1 300); do
  sleep 0.1
  # Once both ranks are likely to have recorded part of their first workload.
  [ -s "$out/c.log" ] || continue
  n=$("$opsched" records verify "$out/c.log" 2>/dev/null | awk '/^intact:/{print $2}')
  [ "${n:-0}" -ge 6 ] || continue
  for pid in $(pgrep -f "tune --mpi --target cpu"); do
    # (grep -z reads the NUL-separated files itself: no pipe for pipefail to trip on.)
    if grep -qzx "OMPI_COMM_WORLD_RANK=1" "/proc/$pid/environ" 2>/dev/null &&
       ! grep -qz __opsched_worker "/proc/$pid/cmdline" 2>/dev/null; then
      victim=$pid
    fi
  done
  [ -n "$victim" ] && break
done
[ -n "$victim" ] || { echo "FAIL: rank 1 not found"; kill $job; exit 1; }
kill -9 "$victim"
echo "killed rank 1 (pid $victim)"
wait $job
code=$?
cat "$out/c.txt"
[ $code -eq 0 ] || { echo "FAIL: exit $code after a rank died"; cat "$out/c.err"; exit 1; }
grep -q "^rank 1 .* died: no message for 3 s; re-queued line" "$out/c.txt" ||
  { echo "FAIL: the summary does not name the dead rank and its re-queued workload"; exit 1; }
check_log "$out/c.log" 12 || exit 1
echo "PASS"
