#!/usr/bin/env bash
# h62 (H200): sigmoid through ex2.approx.ftz and rcp.approx.ftz. GPU pointwise tests; the suite's chains with a
# sigmoid or SiLU (pointwise.txt lines 6, 10, 14, 16-20) served from the shipped H200 logs by the previous build
# (h60's) and this one, then beside eager PyTorch and torch.compile.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h62; R=bench/records/nvidia-h200; cp $H/*.sh $H/*.txt $W/
mkdir -p /tmp/old && tar xJf .out/h60/bundle.tar.xz -C /tmp/old
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
mkdir -p /tmp/rf && ln -sfn $PWD /tmp/rf/opsched
for t in pointwise_test pointwise_hoist_test pointwise_batchnorm_test pointwise_accumulator_test; do
  TEST_SRCDIR=/tmp/rf timeout 200 .bundle/run $t > $W/$t.txt 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/$t.txt | tr '\n' ' ')"
done; save
L="$R/pointwise.log"
B="--rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
for round in 1 2; do
  timeout 100 /tmp/old/.bundle/run opsched bench --suite $H/sigmoid.txt --records $L $B --baseline /tmp/b0.json --report $W/old$round > $W/bench_old$round.txt 2>&1
  timeout 100 .bundle/run opsched bench --suite $H/sigmoid.txt --records $L $B --baseline /tmp/b1.json --report $W/new$round > $W/bench_new$round.txt 2>&1
done
echo "bench $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 300 python3 compare_torch.py --suite ../$H/sigmoid.txt --opsched $W/new2/report.json --compile \
   --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; grep -h "geomean" $W/compare.txt; save
