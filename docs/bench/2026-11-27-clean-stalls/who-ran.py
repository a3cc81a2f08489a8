"""Who ran while a call stalled: reads test/perf/per-rank.ts's per-rank files ($TMPDIR/cclab-per-rank-<r>.json,
each call's time and end on CLOCK_MONOTONIC) and the scheduler's switches (/tmp/switch.txt, from perf
recorded with -k CLOCK_MONOTONIC, see who-ran-n2.txt), and prints, for every call whose average over
ranks took over 300 µs, which threads ran on each CPU during it. Usage: python3 who-ran.py NRANKS
"""
import json,os,re,sys,collections
# sched_switch lines -> per cpu list of (t, next_tid, next_comm, prev_tid, prev_state)
ev=collections.defaultdict(list); pidof={}
R=re.compile(r'^\s*(\S.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch: prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')
for l in open('/tmp/switch.txt'):
    m=R.match(l)
    if not m: continue
    comm,pid,tid,cpu,t,pc,pp,ps,nc,np_=m.groups()
    ev[int(cpu)].append((float(t)*1e6,int(np_),nc,int(pp),ps))
    pidof[int(tid)]=int(pid)
# running intervals per cpu
runs=collections.defaultdict(list)  # cpu -> (start,end,tid,comm)
for cpu,es in ev.items():
    es.sort()
    for (t,ntid,nc,_,_),(t2,_,_,_,_) in zip(es,es[1:]):
        runs[cpu].append((t,t2,ntid,nc))
ranks=[json.load(open(os.path.join(os.environ.get('TMPDIR','/tmp'),f'cclab-per-rank-{r}.json'))) for r in range(int(sys.argv[1]))]
# main threads: tid that ran most among node
tot=collections.Counter()
for cpu,rs in runs.items():
    for a,b,tid,c in rs: tot[(tid,c)]+=b-a
print('top threads by runtime:', [(k,round(v/1e3)) for k,v in tot.most_common(12)])
for name in ranks[0]['series']:
    n=len(ranks[0]['series'][name])
    stalls=[]
    for i in range(n):
        durs=[r['series'][name][i] for r in ranks]
        if sum(durs)/len(durs)>300:
            st=min(r['ends'][name][i]-r['series'][name][i] for r in ranks); en=max(r['ends'][name][i] for r in ranks)
            stalls.append((i,st,en,durs))
    print(f'\n{name}: {len(stalls)} stalled calls')
    for i,st,en,durs in stalls:
        who=collections.Counter()
        for cpu,rs in runs.items():
            for a,b,tid,c in rs:
                o=min(b,en)-max(a,st)
                if o>0: who[(cpu,tid,c)]+=o
        top=', '.join(f'cpu{c} {cm}/{t} {v:.0f}' for (c,t,cm),v in who.most_common(6))
        print(f'  call {i}: {en-st:.0f} us (ranks {[round(d) for d in durs]}): {top}')
