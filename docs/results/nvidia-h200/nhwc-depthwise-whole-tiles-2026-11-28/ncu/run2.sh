#!/usr/bin/env bash
# h59 second part: the pipes and the instruction mix of our kernel (ncu), and its SASS.
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h59; cp $H/*.sh $W/
tar xJf .out/h58/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
S="--section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SourceCounters"
timeout 120 ncu --kernel-name regex:DepthwiseNhwc --launch-count 1 --launch-skip 3 $S --print-details all .bundle/run opsched bench --suite $H/line37.txt \
  --records $H/line37.log --rounds 1 --min-time-ms 1 --no-progress --update-baseline --baseline /tmp/bq.json --report /tmp/rq > $W/ncu-ours-pipes.txt 2>&1
echo "ours rc=$? $(( $(date +%s) - T0 ))s"; save
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
echo "cuobjdump: $CUOBJ"
$CUOBJ -sass -arch sm_90 .bundle/bin/opsched 2>/dev/null | awk '/Function : .*DepthwiseNhwcStagedKernelINS_4BF16ELi3ELi1ELi8ELi16E/{p=1} p&&/Function : /&&!/DepthwiseNhwcStagedKernelINS_4BF16ELi3ELi1ELi8ELi16E/{p=0} p' > $W/sass-bf16-3-1-8-16.txt
wc -l $W/sass-bf16-3-1-8-16.txt; echo "done $(( $(date +%s) - T0 ))s"; save
