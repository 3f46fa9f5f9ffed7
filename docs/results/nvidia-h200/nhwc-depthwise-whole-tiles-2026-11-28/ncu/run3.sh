#!/usr/bin/env bash
# h59 third part: executed instructions per SASS line of our kernel (ncu source page).
set -uo pipefail
T0=$(date +%s); W=/tmp/res; mkdir -p $W; H=.out/h59; cp $H/*.sh $W/
tar xJf .out/h58/bundle.tar.xz -C .
save() { (cd /tmp && tar czf $OUT/results.tar.gz res); }
timeout 120 ncu --kernel-name regex:DepthwiseNhwc --launch-count 1 --launch-skip 3 --section SourceCounters --import-source no -o /tmp/rep -f \
  .bundle/run opsched bench --suite $H/line37.txt --records $H/line37.log --rounds 1 --min-time-ms 1 --no-progress \
  --update-baseline --baseline /tmp/bq.json --report /tmp/rq > $W/ncu-rep.txt 2>&1
echo "ncu rc=$? $(( $(date +%s) - T0 ))s"
ncu -i /tmp/rep.ncu-rep --page source --csv --print-source sass > $W/source-sass.csv 2>&1
echo "export rc=$? $(wc -l < $W/source-sass.csv) lines"; head -3 $W/source-sass.csv | cut -c1-300; save
