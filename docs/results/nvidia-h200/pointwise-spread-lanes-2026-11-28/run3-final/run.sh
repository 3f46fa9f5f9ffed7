#!/usr/bin/env bash
# h68 (H200): final spread lanes (16 lanes only: SpreadChunk). GPU pointwise tests; pointwise.txt lines 7, 14,
# 16 and five held-out chains (lines 4, 5, 7, 9, 13: 8 and 16 lanes) served from the shipped log by the build before
# spread lanes (h63's) and this one, twice in turn; this build's three suite lines beside torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h68; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
for t in pointwise_test pointwise_hoist_test pointwise_batchnorm_test pointwise_accumulator_test; do
  TEST_SRCDIR=/tmp/rf timeout 120 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ') $(( $(date +%s) - T0 ))s"
done; save
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for s in interp3 heldout5; do
  for round in 1 2; do
    for b in old opsched; do
      timeout 60 .bundle/run $b bench --suite $H/$s.txt --records $L $B --baseline /tmp/b$b$s.json --report $W/${s}_$b$round > $W/bench_${s}_$b$round.txt 2>&1
    done
  done
  echo "bench $s $(( $(date +%s) - T0 ))s"; save
done
(cd bench && timeout 120 python3 compare_torch.py --suite ../$H/interp3.txt --opsched $W/interp3_opsched2/report.json --compile \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$? $(( $(date +%s) - T0 ))s")
echo "done $(( $(date +%s) - T0 ))s"; save
