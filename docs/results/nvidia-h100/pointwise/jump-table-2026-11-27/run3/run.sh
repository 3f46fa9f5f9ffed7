#!/usr/bin/env bash
# run 3 (h17, run2.sh): the same two builds as run.sh (prev: no jump table; this build:
# --jump-table-density=50), interleaved, two rounds, over 12 interpreted chains (three of
# pointwise.txt, two train, seven held-out served by the rule); Nsight Compute's executed
# instructions on the 8-op chain for both; bench + compare_torch (eager, torch.compile).
set -uo pipefail
T0=$(date +%s)
W=/tmp/res2; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h17; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
B="--records $R/pointwise.log --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  timeout 100 .bundle/run opsched_prev bench --suite $H/ab2.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/ab_before_$i.txt 2>&1
  timeout 100 .bundle/run opsched bench --suite $H/ab2.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/ab_after_$i.txt 2>&1
  echo "round $i $(( $(date +%s) - T0 ))s"
done
export LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
M=smsp__inst_executed.sum,gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__block_size
for b in opsched_prev opsched; do
  timeout 60 ncu --kernel-name regex:AccumulatorKernel --launch-count 1 --metrics $M .bundle/bin/$b bench --suite $H/line14.txt \
    --records $R/pointwise.log --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq > $W/ncu-line14-$b.txt 2>&1
done
echo "ncu $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res2
cd - >/dev/null
timeout 100 .bundle/run opsched bench --suite $H/ab2.txt --records $R/pointwise.log --rounds 2 --min-time-ms 10 --no-progress \
  --wide --update-baseline --baseline /tmp/bl.json --report /tmp/rep > $W/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
(cd bench && timeout 170 python3 compare_torch.py --suite ../$H/ab2.txt --opsched /tmp/rep/report.json --compile \
   --benchmark both --json $W/compare.json --markdown $W/compare.md > $W/compare.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res2
cd res2 && for f in ab_before_1 ab_after_1 ab_before_2 ab_after_2; do echo $f; grep -E "^ +[0-9]+ +pointwise" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^pointwise_cuda/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
grep -E "inst_executed|duration|registers|block_size|throughput" ncu-line14-*.txt | tr -s ' '
grep -E "geomean" compare.txt | tail -3
