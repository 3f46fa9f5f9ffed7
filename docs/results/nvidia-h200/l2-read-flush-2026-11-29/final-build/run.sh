#!/usr/bin/env bash
# h75 (H200): the final build (2ffd11c). GPU tests of tuner and bench; the bench gate across flushes: a baseline
# written with the overwrite, then a read-flush run that requires it (refused, exit 2), then one with
# --l2-flush overwrite that compares with it.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h75; R=bench/records/nvidia-h200; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
for t in tuner_test bench_test; do
  TEST_SRCDIR=/tmp/rf timeout 150 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
done
grep -h "reading .* MiB" $W/tuner_test.txt; save
L="$R/reduce.log $R/dtypes.log"
O="--suite $H/mem4.txt --records $L --rounds 1 --min-time-ms 5 --no-progress --baseline /tmp/gate.json"
.bundle/run opsched bench $O --l2-flush overwrite --update-baseline > $W/gate1.txt 2>&1; echo "overwrite, update: rc=$?"
.bundle/run opsched bench $O > $W/gate2.txt 2>&1; echo "read against it: rc=$?"; tail -2 $W/gate2.txt
.bundle/run opsched bench $O --l2-flush overwrite > $W/gate3.txt 2>&1; echo "overwrite against it: rc=$?"; grep -E "^ +[0-9]+ " $W/gate3.txt | awk '{print $1, $(NF)}'
echo "done $(( $(date +%s) - T0 ))s"; save
