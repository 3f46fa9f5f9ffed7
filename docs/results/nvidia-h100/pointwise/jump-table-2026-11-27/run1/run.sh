#!/usr/bin/env bash
# run 1 (h16): 32 lanes a thread in the interpreter. GPU tests of the pointwise kernels
# (also 832592e's host-side refactor, not yet run on a GPU), then a grid over the
# interpreter's whole space for six chains (suite and train lines only).
set -uo pipefail
T0=$(date +%s)
W=/tmp/res; mkdir -p $W; cp "$0" $W/run.sh
H=.out/h16
tar xJf $H/bundle.tar.xz -C .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/device.txt
timeout 150 .bundle/run_tests > $W/gpu-tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^== .*(PASSED|FAILED)|^\[  (PASSED|FAILED)" $W/gpu-tests.txt
timeout 240 .bundle/run opsched tune --suite $H/x32.txt --records /tmp/x32.log --policy grid --trials 200 \
  --implementations pointwise_cuda_interpreted --min-time-ms 10 --no-progress > $W/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s"
.bundle/run opsched records export /tmp/x32.log > $W/x32.jsonl 2>/dev/null
cp /tmp/x32.log $W/
cd /tmp && tar czf $OUT/results.tar.gz res
python3 - <<'PY'
import json
rows={}
for l in open('/tmp/res/x32.jsonl'):
    r=json.loads(l)
    if r.get('status')!='OK': continue
    c={k['name']:int(k['i']) for k in r['config']['knobs']}
    w=r['workload']['key'][:70]
    v=c['vector'] if not c['shared'] else -c['vector']
    t=r['stats']['median_us']
    d=rows.setdefault(w,{})
    if v not in d or t<d[v][0]: d[v]=(t,c['block'],c['items'])
for w,d in rows.items():
    print(w)
    print('  '+'  '.join('v%d:%.1f(b%d,i%d)'%(v,*d[v]) for v in sorted(d)))
PY
