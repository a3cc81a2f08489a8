import json,sys,statistics as S
d=json.load(open(sys.argv[1]))
for r in d["rows"]:
    for var in ("outOfPlace","inPlace","builtin"):
        v=r.get(var)
        if not v or "series" not in v: continue
        s=v["series"]; per=len(s)//10
        firsts=[s[i] for i in range(per,len(s),per)]
        others=[x for i,x in enumerate(s) if i%per]
        print(r["algorithm"], r["size"], var, "first %.2f others %.2f excess %.2f"%(S.median(firsts),S.median(others),S.median(firsts)-S.median(others)))
