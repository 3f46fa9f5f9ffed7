#!/usr/bin/env bash
# run 2 (h40): the final rules (staged depthwise nchw: tiles of 32/16 rows below 4 blocks an SM, strips of 2 rows where
# a block's threads idle; specialised pointwise: 16 bytes a tensor) and the 7 new train lines' records in models.log.
# conv2d_test on the GPU; rules alone A/B against 61f7efa's build (prev), 2 rounds, conv lines and pointwise lines;
# the held-out models file with the shipped records and model beside PyTorch; compare_torch of the pointwise rules.
set -uo pipefail
T0=$(date +%s)
W=/tmp/res2; mkdir -p $W; cp "$0" $W/run_b.sh
H=.out/h40; R=bench/records/nvidia-h100
[ -x .bundle/bin/opsched_prev ] || { tar xJf $H/bundle.tar.xz -C . && xz -dc $H/prev/opsched.xz > .bundle/bin/opsched_prev && chmod +x .bundle/bin/opsched_prev; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
save() { cd /tmp && tar czf $OUT/results.tar.gz res2 && cd - > /dev/null; }
B="--rounds 1 --min-time-ms 10 --no-progress --wide --update-baseline"
for i in 1 2; do
  for b in prev new; do
    bin=opsched_$b; [ $b = new ] && bin=opsched
    timeout 110 .bundle/run $bin bench --suite $H/ab_pw.txt $B --baseline /tmp/p$b$i.json --report /tmp/rp$b$i > $W/pw_${b}_$i.txt 2>&1
  done
  echo "pw round $i $(( $(date +%s) - T0 ))s"; save
done
(cd bench && timeout 100 python3 compare_torch.py --suite ../$H/ab_pw.txt --opsched /tmp/rpnew2/report.json \
   --benchmark both --json $W/compare_pw.json --markdown $W/compare_pw.md > $W/compare_pw.txt 2>&1; echo "compare rc=$?")
echo "done $(( $(date +%s) - T0 ))s"; save
grep -E "speedup" $W/heldout_vs_pytorch.txt $W/compare_pw.txt | tail -8
