#!/usr/bin/env bash
# run 8: the channels-last staged depthwise kernel capped at 48 registers a thread
# (__maxnreg__) against the build before, the same records, on the 11 tuned nhwc depthwise lines
set -x
W=/tmp/res; mkdir -p $W
H=.out/h8
tar xJf $H/bundle.tar.xz -C .
xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev
R=bench/records/nvidia-h100
RECS="$R/conv.log $R/reduce.log $R/scatter.log $R/models.log $R/dtypes.log $R/pointwise.log"
B="--records $RECS --model $R/model.opsm --rounds 3 --min-time-ms 20 --no-progress --wide --update-baseline"
for i in 1 2; do
  .bundle/run opsched_prev bench --suite $H/nhwc.txt $B --baseline /tmp/bp.json --report /tmp/rp > $W/bench_prev_$i.txt 2>&1
  .bundle/run opsched bench --suite $H/nhwc.txt $B --baseline /tmp/bn.json --report /tmp/rn > $W/bench_new_$i.txt 2>&1
done
cd /tmp && tar czf $OUT/results.tar.gz res
cd res && for f in bench_prev_1 bench_new_1 bench_prev_2 bench_new_2; do echo $f; grep "^ *[0-9]* *conv2d" $f.txt | awk '{printf "%s:%s ", $1, $(NF-10)}'; echo; done
