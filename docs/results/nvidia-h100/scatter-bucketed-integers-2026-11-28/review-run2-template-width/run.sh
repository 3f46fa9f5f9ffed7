#!/usr/bin/env bash
# run 10 (h38): review, again with the copy width a template parameter: one copy loop (CopyRange) for the scatter copy kernel, the bucketed pairs kernel and the
# windowed copy tiles; one apply loop (ApplyPairs) for both bucketed applies. scatter_test and graph_capture_test on
# the GPU; A/B against f3db0f7's build (prev), 2 rounds, on the bucketed lines and 7 parallel-kernel dtypes lines.
set -uo pipefail
W=$OUT; H=.out/h38; R=bench/records/nvidia-h100
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
cp "$0" $W/run.sh; cp $H/ab.txt $W/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 300 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$?"
grep -E "^== |^\[  (PASSED|FAILED)|^\[  FAILED" $W/gpu-tests.txt
B="--model $R/model.opsm --rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
RECS="$R/scatter.log $R/models.log $R/dtypes.log"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 120 .bundle/run $bin bench --suite $H/ab.txt --records $RECS $B --baseline /tmp/b$b$i.json --report /tmp/r$b$i > $W/ab_${b}_$i.txt 2>&1
  done
done
cd $W && for f in ab_prev_1 ab_new_1 ab_prev_2 ab_new_2; do echo -n "$f: "; grep -E "^ +[0-9]+ +scatter" $f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^scatter_/) {printf "%s:%s ", $1, $(i+2); break}}'; echo; done
