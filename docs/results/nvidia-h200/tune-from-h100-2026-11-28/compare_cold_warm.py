# Cold (run1) against warm (run2) tuning of dtypes.txt and models/train.txt on the H200.
# Run in a folder holding cold_dtypes.jsonl, cold_models.jsonl, warm_dtypes.jsonl and
# warm_models.jsonl (`opsched records export LOG > NAME.jsonl` of the run folders' logs);
# an argument prints every workload's row.
import json, math, collections, sys
def load(fn):
    d=collections.defaultdict(list)
    for l in open(fn):
        r=json.loads(l)
        t=r.get('stats',{}).get('median_us')
        ok = r.get('status')=='OK' and t
        d[r['workload']['key']].append((t if ok else None, r.get('provenance',{}).get('search_policy')))
    return d
def gm(xs): return math.exp(sum(math.log(x) for x in xs)/len(xs)) if xs else float('nan')
SEEDS={'heuristic','served','vendor','transferred','predicted'}
out=[]
for s in ('dtypes','models'):
    c=load(f'cold_{s}.jsonl'); w=load(f'warm_{s}.jsonl')
    rc=[];rw=[];sc=[];sw=[];nc=[];nw=[];ttc=[];ttw=[]; rows=[]
    for k in c:
        if k not in w: continue
        bc=min([t for t,_ in c[k] if t] or [None]) if any(t for t,_ in c[k]) else None
        bw=min([t for t,_ in w[k] if t]) if any(t for t,_ in w[k]) else None
        if bc is None or bw is None: continue
        best=min(bc,bw)
        rc.append(bc/best); rw.append(bw/best)
        seedc=min([t for t,p in c[k] if t and p in SEEDS] or [float('inf')]); seedw=min([t for t,p in w[k] if t and p in SEEDS] or [float('inf')])
        sc.append(seedc/best); sw.append(seedw/best)
        nc.append(len(c[k])); nw.append(len(w[k]))
        def tt(lst):
            for i,(t,_) in enumerate(lst):
                if t and t<=best*1.05: return i+1
            return None
        ttc.append(tt(c[k])); ttw.append(tt(w[k]))
        rows.append((k[:95], bc, bw, seedc, seedw, len(c[k]), len(w[k])))
    print(f"{s}: {len(rc)} workloads; best found/best of both: cold geomean {gm(rc):.3f} worst {max(rc):.3f}; warm geomean {gm(rw):.3f} worst {max(rw):.3f}")
    print(f"   after the seeds alone: cold {gm(sc):.3f} (worst {max(sc):.2f}), warm {gm(sw):.3f} (worst {max(sw):.2f}); candidates measured: cold {sum(nc)}, warm {sum(nw)}")
    print(f"   within 5% of the best of both: cold {sum(1 for x in rc if x<=1.05)}/{len(rc)}, warm {sum(1 for x in rw if x<=1.05)}/{len(rw)}; trials to get there (median): cold {sorted([x for x in ttc if x])[len([x for x in ttc if x])//2]}, warm {sorted([x for x in ttw if x])[len([x for x in ttw if x])//2]}")
    if len(sys.argv)>1:
        for r in rows: print("   %-95s cold %9.2f warm %9.2f | seeds cold %9.2f warm %9.2f | n %d %d" % r)

# The same (workload, implementation, config) measured in both runs: how far the two
# sessions' measurements drift apart.
for s in ('dtypes','models'):
    def same(fn):
        d={}
        for l in open(fn):
            r=json.loads(l); t=r.get('stats',{}).get('median_us')
            if r.get('status')=='OK' and t: d[(r['workload']['key'], r['implementation'], json.dumps(r.get('config',{}),sort_keys=True))]=t
        return d
    c=same(f'cold_{s}.jsonl'); w=same(f'warm_{s}.jsonl')
    rs=sorted(c[k]/w[k] for k in c if k in w)
    print(f"{s}: {len(rs)} candidates measured in both runs, cold/warm geomean {gm(rs):.4f}, p10 {rs[len(rs)//10]:.3f}, p90 {rs[9*len(rs)//10]:.3f}")
