#!/usr/bin/env bash
# h47 (H200): served from the H200 logs and the H200 model (fitted on the H100 and H200 logs, held-out
# files excluded): the held-out models file (never tuned; served/best against a later reference
# tuning) and dtypes.txt (tuned), each beside PyTorch in the same run.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h47; cp $H/*.sh $W/
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/model.opsm.xz > /tmp/model.opsm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $W/device.txt
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
L="$H/conv.log $H/dtypes.log $H/models.log $H/pointwise.log $H/reduce.log $H/scatter.log"
B="--model /tmp/model.opsm --rounds 2 --min-time-ms 10 --no-progress --wide --update-baseline"
timeout 120 .bundle/run opsched bench --suite bench/suites/models/heldout.txt --records $L --reference $H/reference_heldout.log $B \
  --baseline /tmp/b1.json --report $W/heldout > $W/bench_heldout.txt 2>&1
echo "bench heldout rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 150 python3 compare_torch.py --suite ../bench/suites/models/heldout.txt --opsched $W/heldout/report.json \
   --benchmark both --json $W/compare_heldout.json --markdown $W/compare_heldout.md > $W/compare_heldout.txt 2>&1; echo "compare heldout rc=$?")
echo "$(( $(date +%s) - T0 ))s"; save
timeout 150 .bundle/run opsched bench --suite bench/suites/dtypes.txt --records $L $B --baseline /tmp/b2.json --report $W/dtypes > $W/bench_dtypes.txt 2>&1
echo "bench dtypes rc=$? $(( $(date +%s) - T0 ))s"; save
(cd bench && timeout 200 python3 compare_torch.py --suite ../bench/suites/dtypes.txt --opsched $W/dtypes/report.json \
   --benchmark both --json $W/compare_dtypes.json --markdown $W/compare_dtypes.md > $W/compare_dtypes.txt 2>&1; echo "compare dtypes rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; tail -8 $W/compare_heldout.txt; tail -8 $W/compare_dtypes.txt; grep -E "served/best|geomean" $W/bench_heldout.txt | tail -5; save
