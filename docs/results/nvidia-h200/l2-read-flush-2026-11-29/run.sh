#!/usr/bin/env bash
# h74 (H200): the read L2 flush (core/l2_flush.h), in three calls on one warm machine:
#   a: GPU tests of tuner and bench (the flusher's eviction test among them); dtypes.txt served from the
#      shipped H200 logs with the read flush, beside PyTorch flushed alike;
#   b: dtypes.txt again with the overwrite (the flush before), beside PyTorch flushed alike; then
#      LoadLanes/StoreLanes (the interpreter's load and store ladders in one helper each): base without,
#      opsched with, in turn twice on pointwise.txt lines 7, 14 and 16 (interp3.txt lines 1-3);
#   c: the held-out models file (never tuned; served/best against h46's reference tuning) beside PyTorch
#      (cudnn.benchmark off and on), and pointwise.txt's 8-op chain with the held-out pointwise file beside
#      PyTorch eager and torch.compile; read flush throughout (the pointwise bench ran out of time in c);
#   d: dtypes.txt with the read flush once more, beside PyTorch (is line 7's doubled eager time under the read
#      flush reproducible?); the pointwise part of c again with time for it;
#   e: dtypes.txt lines 22, 24, 28, 30 (the large memory-bound reductions) tuned afresh with the read flush
#      (a new log, the shipped logs as transfer seeds), then served from it beside PyTorch;
#   f: the held-out models file out of the box (the shipped logs and the shipped model) beside PyTorch, and
#      explain of its line 17 (a 3x3 conv at 25x34 served from a nearest record below cuDNN's heuristic).
set -uo pipefail
part=$1
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h74; R=bench/records/nvidia-h200; cp $H/*.sh $W/
[ -x .bundle/run ] || tar xJf $H/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$R/conv.log $R/dtypes.log $R/models.log $R/pointwise.log $R/reduce.log $R/scatter.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
dtypes() {
  timeout 200 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $L $B --l2-flush $1 --baseline /tmp/b_$1.json \
    --report $W/dtypes_$1 > $W/bench_dtypes_$1.txt 2>&1
  echo "bench dtypes $1 rc=$? $(( $(date +%s) - T0 ))s"; save
  (cd bench && timeout 150 python3 compare_torch.py --suite suites/dtypes.txt --opsched $W/dtypes_$1/report.json \
     --json $W/compare_dtypes_$1.json --markdown $W/compare_dtypes_$1.md > $W/compare_dtypes_$1.txt 2>&1; echo "compare dtypes $1 rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_dtypes_$1.txt; save
}
case $part in
a)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
  mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
  for t in tuner_test bench_test; do
    TEST_SRCDIR=/tmp/rf timeout 150 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
  done
  grep -h "reading .* MiB" $W/tuner_test.txt; save
  dtypes read ;;
b)
  dtypes overwrite
  for k in 1 2; do for b in base opsched; do
    timeout 60 .bundle/run $b bench --suite $H/interp3.txt --records $L $B --baseline /tmp/ab$b$k.json --report $W/ab_${b}_$k > $W/bench_ab_${b}_$k.txt 2>&1
  done; done
  echo "ab $(( $(date +%s) - T0 ))s"
  for f in $W/bench_ab_*.txt; do echo "$(basename $f) $(grep -E '^ *[0-9]+  pointwise' $f | awk '{printf "%s ", $(NF-10)}')"; done; save ;;
c)
  timeout 150 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --reference $H/reference_heldout.log $B \
    --baseline /tmp/b1.json --report $W/heldout > $W/bench_heldout.txt 2>&1
  echo "bench heldout rc=$? $(( $(date +%s) - T0 ))s"; save
  (cd bench && timeout 150 python3 compare_torch.py --suite suites/models/heldout.txt --opsched $W/heldout/report.json \
     --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare heldout rc=$? $(( $(date +%s) - T0 ))s")
  save
  sed -n 14p bench/suites/pointwise.txt > $W/chain8.txt; grep -v '^#' bench/suites/pointwise_heldout.txt >> $W/chain8.txt
  timeout 100 .bundle/run opsched bench --suite $W/chain8.txt --records $L --rounds 1 --min-time-ms 5 --no-progress --wide \
    --update-baseline --baseline /tmp/b3.json --report $W/pw > $W/bench_pointwise.txt 2>&1
  echo "bench pointwise rc=$? $(( $(date +%s) - T0 ))s"; save
  left=$(( 570 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/chain8.txt --opsched $W/pw/report.json --compile \
     --json $W/compare_pointwise.json --markdown $W/compare_pointwise.md > $W/compare_pointwise.txt 2>&1; echo "compare pw rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_*.txt ;;
d)
  dtypes read
  sed -n 14p bench/suites/pointwise.txt > $W/chain8.txt; grep -v '^#' bench/suites/pointwise_heldout.txt >> $W/chain8.txt
  timeout 260 .bundle/run opsched bench --suite $W/chain8.txt --records $L --rounds 1 --min-time-ms 5 --no-progress --wide \
    --update-baseline --baseline /tmp/b3.json --report $W/pw > $W/bench_pointwise.txt 2>&1
  echo "bench pointwise rc=$? $(( $(date +%s) - T0 ))s"; save
  left=$(( 575 - ($(date +%s) - T0) ))
  (cd bench && timeout $left python3 compare_torch.py --suite $W/chain8.txt --opsched $W/pw/report.json --compile \
     --json $W/compare_pointwise.json --markdown $W/compare_pointwise.md > $W/compare_pointwise.txt 2>&1; echo "compare pw rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean speedup\|copy bandwidth" $W/compare_pointwise.txt ;;
e)
  timeout 200 .bundle/run opsched tune --suite $H/mem4.txt --records $W/mem4.log --trials 48 --time-budget 170 \
    --transfer $L --min-time-ms 10 --no-progress --wide > $W/tune_mem4.txt 2>&1
  echo "tune mem4 rc=$? $(( $(date +%s) - T0 ))s"; save
  timeout 60 .bundle/run opsched bench --suite $H/mem4.txt --records $W/mem4.log $B --baseline /tmp/b4.json --report $W/mem4 > $W/bench_mem4.txt 2>&1
  echo "bench mem4 rc=$? $(( $(date +%s) - T0 ))s"; save
  (cd bench && timeout 60 python3 compare_torch.py --suite ../$H/mem4.txt --opsched $W/mem4/report.json \
     --json $W/compare_mem4.json > $W/compare_mem4.txt 2>&1; echo "compare mem4 rc=$? $(( $(date +%s) - T0 ))s")
  cat $W/compare_mem4.txt ;;
f)
  timeout 150 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --model $R/model.opsm \
    --reference $H/reference_heldout.log $B --baseline /tmp/b5.json --report $W/heldout_model > $W/bench_heldout_model.txt 2>&1
  echo "bench heldout model rc=$? $(( $(date +%s) - T0 ))s"; save
  (cd bench && timeout 150 python3 compare_torch.py --suite suites/models/heldout.txt --opsched $W/heldout_model/report.json \
     --benchmark both --json $W/compare_heldout_model.json --markdown $W/compare_heldout_model.md > $W/compare_heldout_model.txt 2>&1; echo "compare heldout model rc=$? $(( $(date +%s) - T0 ))s")
  grep -h "geomean" $W/compare_heldout_model.txt; save
  w17=$(grep -v '^#' bench/suites/models/heldout.txt | grep -m1 'x=f32\[2,256,25,34\]' | sed 's/ *#.*//')
  for m in "" "--model $R/model.opsm"; do
    timeout 60 .bundle/run opsched explain --records $L $m "$w17" >> $W/explain17.txt 2>&1; echo "---" >> $W/explain17.txt
  done
  cat $W/explain17.txt | head -60 ;;
esac
echo "done $part $(( $(date +%s) - T0 ))s"; save
