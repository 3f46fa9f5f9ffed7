#!/usr/bin/env bash
# run 7 (h22): the whole dtype suite with the final build (run 6's bundle: the jump-table
# dispatch and the scatter as the copy's programmatic dependent), shipped records and
# model, then bench/compare_torch.py beside PyTorch (device and wall time).
set -uo pipefail
T0=$(date +%s)
W=/tmp/res7; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h22; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
timeout 300 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $RECS --model $R/model.opsm --rounds 2 \
  --min-time-ms 10 --no-progress --wide --update-baseline --baseline /tmp/bl_d.json --report $W/rep_dtypes > $W/bench_dtypes.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 ))s"
cd /tmp && tar czf $OUT/results.tar.gz res7 && cd - > /dev/null
(cd bench && timeout 240 python3 compare_torch.py --suite suites/dtypes.txt --opsched $W/rep_dtypes/report.json --benchmark both \
   --json $W/dtypes_vs_torch.json --markdown $W/dtypes_vs_torch.md > $W/compare_dtypes.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"
rm -rf $W/rep_dtypes/*.svg
cd /tmp && tar czf $OUT/results.tar.gz res7
grep -E "geomean|slowest" $W/compare_dtypes.txt | tail -5
